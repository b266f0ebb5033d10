/**
 * A small Splunk HEC: checks `Authorization: Splunk <token>` (401 code 2 when missing,
 * 403 code 4 when wrong), ungzips, parses the concatenated event stream, stores accepted
 * events, refuses an event whose `event.poison` is set (400 code 6 + invalid-event-number,
 * nothing of that request stored, the strictest reading of Splunk), answers scripted
 * codes, and implements indexer acknowledgement on `/services/collector/ack`.
 */
import { startHttpReceiver, type HttpReceiver, type Reply } from './http-receiver.ts';
import { parseConcatenatedJson } from './json-stream.ts';

export interface HecEvent {
  time: number;
  host?: string;
  source?: string;
  sourcetype?: string;
  index?: string;
  event: Record<string, unknown>;
}

export interface HecReceiver {
  url: string;
  http: HttpReceiver;
  /** Events accepted (and, with acks, once acked they count as indexed). */
  events: HecEvent[];
  /** Scripted answers for the next event POSTs, consumed first-in first-out. */
  script: Reply[];
  ack: { enabled: boolean /** polls answered `false` before `true` */; pollsBeforeTrue: number; never: boolean };
  ackPolls: number;
  channels: Set<string>;
  close(): Promise<void>;
}

export async function startHecReceiver(token: string): Promise<HecReceiver> {
  let nextAckId = 0;
  const pendingAcks = new Map<number, number>(); // ackId -> polls seen
  const r: HecReceiver = {
    url: '',
    http: undefined as unknown as HttpReceiver,
    events: [],
    script: [],
    ack: { enabled: false, pollsBeforeTrue: 0, never: false },
    ackPolls: 0,
    channels: new Set(),
    close: async () => r.http.close(),
  };
  r.http = await startHttpReceiver((req) => {
    const auth = req.headers['authorization'];
    // The health endpoint needs no token (as in Splunk).
    if (req.path.startsWith('/services/collector/health')) return { status: 200, body: { text: 'HEC is healthy', code: 17 } };
    if (!auth) return { status: 401, body: { text: 'Token is required', code: 2 } };
    if (auth !== `Splunk ${token}`) return { status: 403, body: { text: 'Invalid token', code: 4 } };
    const channel = req.headers['x-splunk-request-channel'];
    if (typeof channel === 'string') r.channels.add(channel);
    if (req.path.startsWith('/services/collector/ack')) {
      if (!r.ack.enabled) return { status: 400, body: { text: 'ACK is disabled', code: 14 } };
      r.ackPolls++;
      const ids = (JSON.parse(req.body.toString('utf8')) as { acks: number[] }).acks;
      const acks: Record<string, boolean> = {};
      for (const id of ids) {
        const seen = (pendingAcks.get(id) ?? 0) + 1;
        pendingAcks.set(id, seen);
        acks[String(id)] = !r.ack.never && seen > r.ack.pollsBeforeTrue;
      }
      return { status: 200, body: { acks } };
    }
    if (req.path !== '/services/collector/event')
      return { status: 404, body: { text: 'The requested URL was not found on this server.', code: 404 } };
    const scripted = r.script.shift();
    if (scripted) return scripted;
    let events: HecEvent[];
    try {
      events = parseConcatenatedJson(req.body.toString('utf8')) as HecEvent[];
    } catch {
      return { status: 400, body: { text: 'Invalid data format', code: 6 } };
    }
    if (events.length === 0) return { status: 400, body: { text: 'No data', code: 5 } };
    const bad = events.findIndex((e) => e.event === undefined || (e.event as { poison?: unknown }).poison !== undefined);
    if (bad >= 0) return { status: 400, body: { text: 'Invalid data format', code: 6, 'invalid-event-number': bad } };
    r.events.push(...events);
    if (r.ack.enabled && typeof channel === 'string') return { status: 200, body: { text: 'Success', code: 0, ackId: nextAckId++ } };
    return { status: 200, body: { text: 'Success', code: 0 } };
  });
  r.url = r.http.url;
  return r;
}
