/** A provisioning config with defaults, as the loader would produce it from `patch`. */
import { provisioningSchema, type ProvisioningConfig as Config } from '../../../src/config/schema.ts';

export function provisioningConfig(patch: Record<string, unknown> = {}): Config {
  return provisioningSchema.parse({ source: { type: 'file', path: 'directory.yaml' }, ...patch });
}
