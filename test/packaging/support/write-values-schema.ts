/**
 * Regenerates the daemon-config part of helm/scim-audit-sync/values.schema.json from
 * src/config/schema.ts (the rest of the file is written by hand). Run after changing the
 * config schema:
 *   node test/packaging/support/write-values-schema.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chartConfigSchema } from './chart-config-schema.ts';
import type { JsonSchema } from './json-schema.ts';

export const VALUES_SCHEMA_PATH = fileURLToPath(new URL('../../../helm/scim-audit-sync/values.schema.json', import.meta.url));

/** `current` with its `config` property and `config.*` definitions replaced by the generated ones. */
export function spliceConfigSchema(current: JsonSchema): JsonSchema {
  const { config, definitions } = chartConfigSchema();
  const own = Object.entries((current['definitions'] as Record<string, JsonSchema> | undefined) ?? {}).filter(
    ([k]) => !k.startsWith('config.'),
  );
  return {
    ...current,
    properties: { ...(current['properties'] as Record<string, JsonSchema>), config },
    definitions: Object.fromEntries([...own, ...Object.entries(definitions)]),
  };
}

export function renderSchema(schema: JsonSchema): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const current = JSON.parse(readFileSync(VALUES_SCHEMA_PATH, 'utf8')) as JsonSchema;
  writeFileSync(VALUES_SCHEMA_PATH, renderSchema(spliceConfigSchema(current)));
  process.stdout.write(`updated ${VALUES_SCHEMA_PATH}\n`);
}
