/**
 * What `validate` shows of the effective config: a short human summary and a redacted
 * copy for --json. Secrets never appear: secret-named keys are replaced and credentials
 * embedded in URLs are masked.
 */
import type { LoadedConfig } from '../config/load.ts';
import { isSecretKeyName } from '../config/format-issues.ts';
import { resolveConfigPath } from '../config/paths.ts';
import { REDACTED } from '../config/secret.ts';
import { table } from './output.ts';

/** `redis://user:pw@host` → `redis://user:[redacted]@host`; other strings unchanged. */
export function maskUrlCredentials(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/:@\s]*):[^/@\s]*@/i, `$1:${REDACTED}@`);
}

export function redactConfig(value: unknown, key?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => redactConfig(v));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactConfig(v, k)]));
  }
  if (typeof value === 'string') return isSecretKeyName(key) ? REDACTED : maskUrlCredentials(value);
  return value;
}

function scalars(obj: object, skip: readonly string[]): string {
  const redacted = redactConfig(obj) as Record<string, unknown>;
  return Object.entries(redacted)
    .filter(([k, v]) => !skip.includes(k) && (typeof v !== 'object' || v === null))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
}

export function summarizeConfig(loaded: LoadedConfig): string[] {
  const { config, configDir } = loaded;
  const p = config.platform;
  const credential =
    p.tokenFile !== undefined
      ? `${p.authScheme} token from platform.tokenFile (${resolveConfigPath(configDir, p.tokenFile)})`
      : `${p.authScheme} token from platform.token`;
  const rows: [string, string][] = [
    ['tenant', config.tenant],
    ['platform', `${p.baseUrl.replace(/\/+$/, '')}${p.scimPath}`],
    ['credential', `${credential} ${REDACTED}`],
    [
      'http',
      `maxConnections=${p.maxConnections} timeoutSeconds=${p.timeoutSeconds} retry.maxAttempts=${p.retry.maxAttempts}${p.caFile ? ` caFile=${p.caFile}` : ''}${p.allowInsecureHttp ? ' allowInsecureHttp=true' : ''}`,
    ],
  ];
  const prov = config.provisioning;
  if (prov) {
    rows.push(['source', `${prov.source.type} ${scalars(prov.source, ['type'])}`.trim()]);
    rows.push(['mapping', `user: ${Object.keys(prov.mapping.user).length} rules, group: ${Object.keys(prov.mapping.group).length} rules`]);
    rows.push(['scope', `users: ${prov.scope.users ?? 'all'}; groups: ${prov.scope.groups ?? 'all'}`]);
    rows.push([
      'deprovision',
      `action=${prov.deprovision.action} deleteGroups=${prov.deprovision.deleteGroups} deleteAfterDays=${prov.deprovision.deleteAfterDays}`,
    ]);
    rows.push([
      'guards',
      `maxDeletes=${prov.guards.maxDeletes} maxDeletePercent=${prov.guards.maxDeletePercent} maxMemberRemovals=${prov.guards.maxMemberRemovals} maxMemberRemovalPercent=${prov.guards.maxMemberRemovalPercent} membership=${prov.membership}`,
    ]);
    rows.push([
      'apply',
      `concurrency=${prov.apply.concurrency} requestsPerSecond=${prov.apply.requestsPerSecond || 'unlimited'} ownership=${prov.ownership.mode} adoptExisting=${prov.matching.adoptExisting}${prov.matching.handOverLeaverAccountsByName ? ' handOverLeaverAccountsByName=true' : ''}`,
    ]);
  } else {
    rows.push(['provisioning', 'not configured']);
  }
  rows.push(['audit', config.audit ? `configured (${Object.keys(config.audit).join(', ') || 'defaults'})` : 'not configured']);
  rows.push([
    'state',
    config.redis
      ? `redis ${maskUrlCredentials(config.redis.url)} keyPrefix=${config.redis.keyPrefix}`
      : `dir ${resolveConfigPath(configDir, config.state.dir)}`,
  ]);
  rows.push(['logging', `level=${config.logging.level}`]);
  return table(rows);
}
