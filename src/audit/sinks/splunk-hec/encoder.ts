import type { AuditEvent } from '../../event.ts';
import { docJson, lineSafeJson } from '../doc-json.ts';

export interface HecEnvelope {
  index?: string | undefined;
  source?: string | undefined;
  sourcetype?: string | undefined;
  host?: string | undefined;
}

/**
 * One HEC event object. `time` is epoch seconds with millisecond precision, written as a
 * fixed-point literal so no float rounding creeps in. Objects are newline-separated (HEC
 * accepts concatenated objects; the newline keeps captures readable).
 */
export function encodeHecEvent(event: AuditEvent, env: HecEnvelope): Buffer {
  if (!Number.isFinite(event.timestampMs)) throw new Error('event has no valid timestamp');
  let head = `{"time":${(event.timestampMs / 1000).toFixed(3)}`;
  if (env.host !== undefined) head += `,"host":${JSON.stringify(env.host)}`;
  if (env.source !== undefined) head += `,"source":${JSON.stringify(env.source)}`;
  if (env.sourcetype !== undefined) head += `,"sourcetype":${JSON.stringify(env.sourcetype)}`;
  if (env.index !== undefined) head += `,"index":${JSON.stringify(env.index)}`;
  return Buffer.from(`${lineSafeJson(head)},"event":${docJson(event)}}\n`, 'utf8');
}
