/**
 * HEC indexer acknowledgement: poll `/services/collector/ack` on the batch's channel until
 * Splunk reports the ackId indexed, or give up after the timeout (the caller then resends
 * the batch: at-least-once). Poll failures other than auth/config keep polling until then.
 */
import { ErrorCodes, SyncError } from '../../../errors.ts';
import { sleep } from '../../../platform/retry.ts';
import { authError, type HttpTransport } from '../http-transport.ts';
import { HEC_CONFIG_HINTS, parseHecBody } from './codes.ts';

export interface AckPollOptions {
  sink: string;
  path: string;
  headers: Record<string, string>;
  pollIntervalMs: number;
  timeoutMs: number;
}

/** true once indexed, false on timeout. */
export async function waitForAck(transport: HttpTransport, ackId: number, opts: AckPollOptions, signal?: AbortSignal): Promise<boolean> {
  const deadline = performance.now() + opts.timeoutMs;
  const body = Buffer.from(JSON.stringify({ acks: [ackId] }));
  for (;;) {
    await sleep(Math.min(opts.pollIntervalMs, Math.max(0, deadline - performance.now())), signal);
    try {
      const res = await transport.send({ method: 'POST', path: opts.path, headers: opts.headers, body }, signal);
      if (res.status === 401 || res.status === 403) throw authError(opts.sink, 'splunk-hec', res.status, 'token / tokenFile');
      if (res.status >= 200 && res.status < 300) {
        if (ackStatus(res.text, ackId)) return true;
      } else {
        const code = parseHecBody(res.text).code;
        if (code === 14)
          throw new SyncError(ErrorCodes.CONFIG_INVALID, 'fatal', `sink ${opts.sink}: ${HEC_CONFIG_HINTS[14]}`, { status: res.status });
      }
    } catch (e) {
      if (e instanceof SyncError || signal?.aborted) throw e;
      // A network hiccup while polling: the ack may still come, keep polling until the deadline.
    }
    if (performance.now() >= deadline) return false;
  }
}

function ackStatus(text: string, ackId: number): boolean {
  try {
    const acks = (JSON.parse(text) as { acks?: Record<string, unknown> }).acks;
    return acks?.[String(ackId)] === true;
  } catch {
    return false;
  }
}
