/**
 * `validate --check-connectivity` for user attributes: one GET of the definitions list with the
 * platform API token (apiToken/apiTokenFile, else the SCIM token), when attributes are configured.
 */
import type { LoadedConfig } from '../config/load.ts';
import { isSyncError } from '../errors.ts';
import { createAttributeClient, type BuiltAttributeClient } from '../reconcile/attributes/from-config.ts';
import type { CheckResult } from './connectivity.ts';

export async function checkUserAttributes(loaded: LoadedConfig, signal?: AbortSignal): Promise<CheckResult | undefined> {
  let built: BuiltAttributeClient | undefined;
  try {
    built = createAttributeClient(loaded, { retry: { maxAttempts: 2 } });
  } catch (e) {
    return {
      name: 'user-attributes',
      ok: false,
      detail: e instanceof Error ? e.message : String(e),
      ...(isSyncError(e) ? { code: e.code } : {}),
    };
  }
  if (!built) return undefined;
  try {
    const defs = await built.client.listDefinitions(signal);
    const wanted = loaded.config.provisioning?.userAttributes ?? [];
    const byName = new Map(defs.map((d) => [d.name, d]));
    const missing = wanted.filter((w) => !byName.has(w.name)).map((w) => w.name);
    const wrong = wanted
      .filter((w) => byName.has(w.name) && byName.get(w.name)?.type !== w.type)
      .map((w) => `${w.name} is ${byName.get(w.name)?.type}, config says ${w.type}`);
    const parts = [
      `${defs.length} definitions readable`,
      missing.length > 0 ? `to create: ${missing.join(', ')}` : undefined,
      wrong.length > 0 ? `WRONG TYPE: ${wrong.join('; ')}` : undefined,
    ].filter(Boolean);
    return { name: 'user-attributes', ok: wrong.length === 0, detail: parts.join('; ') };
  } catch (e) {
    return {
      name: 'user-attributes',
      ok: false,
      detail: e instanceof Error ? e.message : String(e),
      ...(isSyncError(e) ? { code: e.code } : {}),
    };
  } finally {
    await built.platform.close();
  }
}
