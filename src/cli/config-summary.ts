/**
 * What `validate` shows of the effective config: a short human summary and a redacted
 * copy for --json. Secrets never appear: secret-named keys are replaced and credentials
 * embedded in URLs are masked.
 */
import type { LoadedConfig } from '../config/load.ts';
import { resolveConfigPath } from '../config/paths.ts';
import { REDACTED } from '../config/secret.ts';
import { isSecretKeyName, looksSecret, maskUrlCredentials } from '../config/secret-text.ts';
import { table } from './output.ts';

/** A copy with every value under a secret key, and every secret-looking string, replaced. */
export function redactConfig(value: unknown, key?: string, underSecret = false): unknown {
  const secret = underSecret || isSecretKeyName(key);
  if (Array.isArray(value)) return value.map((v) => redactConfig(v, undefined, secret));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactConfig(v, k, secret)]));
  }
  if (typeof value === 'string') {
    if (secret) return REDACTED;
    const masked = maskUrlCredentials(value);
    return masked === value && looksSecret(value) ? REDACTED : masked;
  }
  return value;
}

/** Where the state lives: the Redis the daemon will actually use (its url is ignored under sentinel or cluster). */
function redisTarget(redis: NonNullable<LoadedConfig['config']['redis']>): string {
  const nodes = (list: readonly { host: string; port: number }[]): string => list.map((n) => `${n.host}:${n.port}`).join(',');
  if (redis.sentinel) return `redis sentinel master "${redis.sentinel.name}" via ${nodes(redis.sentinel.nodes)}`;
  if (redis.cluster) return `redis cluster ${nodes(redis.cluster.nodes)}`;
  return `redis ${maskUrlCredentials(redis.url)}`;
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
      ? `${redisTarget(config.redis)} keyPrefix=${config.redis.keyPrefix}`
      : `dir ${resolveConfigPath(configDir, config.state.dir)}`,
  ]);
  rows.push(['logging', `level=${config.logging.level}`]);
  return table(rows);
}
