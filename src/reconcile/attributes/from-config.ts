/**
 * The user-attribute client of a tenant, built from its config: its own PlatformClient with
 * the platform API token (`platform.apiToken` / `apiTokenFile`, else the SCIM token), always
 * with the `Bearer` scheme (the platform API accepts nothing else), and the same base URL,
 * retries, timeouts and hooks as the SCIM client. Undefined when no attribute is configured.
 */
import type { PlatformConfigSource } from '../../platform/from-config.ts';
import { createPlatformClient } from '../../platform/from-config.ts';
import type { PlatformClient, PlatformClientOptions } from '../../platform/http-client.ts';
import { UserAttributesClient } from '../../platform/user-attributes.ts';

export interface BuiltAttributeClient {
  client: UserAttributesClient;
  platform: PlatformClient;
}

/** The platform API credential: apiToken, the content of apiTokenFile, or the SCIM token. */
export function platformApiToken(loaded: PlatformConfigSource): string {
  const p = loaded.config.platform;
  return p.apiToken ?? loaded.secrets.files.get('platform.apiTokenFile')?.reveal() ?? loaded.secrets.platformToken.reveal();
}

export function createAttributeClient(
  loaded: PlatformConfigSource,
  overrides: Partial<PlatformClientOptions> = {},
): BuiltAttributeClient | undefined {
  if ((loaded.config.provisioning?.userAttributes.length ?? 0) === 0) return undefined;
  const platform = createPlatformClient(loaded, { ...overrides, token: platformApiToken(loaded), authScheme: 'Bearer' });
  return { client: new UserAttributesClient(platform), platform };
}
