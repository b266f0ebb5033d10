import { z } from 'zod';
import { fileSourceSchema } from './file/schema.ts';
import { ldapSourceSchema } from './ldap/schema.ts';
import { csvSourceSchema } from './csv/schema.ts';
import { scimSourceSchema } from './scim/schema.ts';
import { googleWorkspaceSourceSchema } from './google/schema.ts';
import { entraIdSourceSchema } from './entra/schema.ts';
import { oktaSourceSchema } from './okta/schema.ts';

/** Every source type's config, chosen by `type`. Add a source: add its schema here and a factory in registry.ts. */
export const sourceSchema = z.discriminatedUnion('type', [
  fileSourceSchema,
  ldapSourceSchema,
  csvSourceSchema,
  scimSourceSchema,
  googleWorkspaceSourceSchema,
  entraIdSourceSchema,
  oktaSourceSchema,
]);
export type SourceConfig = z.infer<typeof sourceSchema>;
