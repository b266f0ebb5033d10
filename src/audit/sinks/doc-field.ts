/**
 * Reads a field from an event document whatever its field style (see audit/build-event.ts):
 * a flat dotted key (`{"event.action": …}`) wins, then the nested path (`{"event": {"action": …}}`,
 * the `ecs` style), then the `plain` style's name for the same normalized field (`action`),
 * then the `ocsf` style's place for it (`metadata.event_code`).
 */

/** ECS path → the `plain` field style's name for it. */
const PLAIN_ALIASES: Readonly<Record<string, string>> = {
  '@timestamp': 'timestamp',
  'event.id': 'id',
  'event.action': 'action',
  'user.email': 'email',
  'source.ip': 'ip',
};

/** ECS path → where the `ocsf` field style puts the same field. */
const OCSF_PATHS: Readonly<Record<string, string>> = {
  '@timestamp': 'time',
  'event.id': 'metadata.uid',
  'event.action': 'metadata.event_code',
  'event.outcome': 'status',
  'user.email': 'actor.user.email_addr',
  'source.ip': 'src_endpoint.ip',
};

function nested(doc: Record<string, unknown>, path: string): unknown {
  let cur: unknown = doc;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') {
      cur = undefined;
      break;
    }
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

export function docField(doc: Record<string, unknown>, path: string): unknown {
  if (path in doc) return doc[path];
  const cur = nested(doc, path);
  if (cur !== undefined) return cur;
  const alias = PLAIN_ALIASES[path];
  if (alias !== undefined && doc[alias] !== undefined) return doc[alias];
  const ocsf = OCSF_PATHS[path];
  return ocsf !== undefined ? nested(doc, ocsf) : undefined;
}

/** A scalar rendered as text; objects as JSON; missing or empty as undefined. */
export function fieldText(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
