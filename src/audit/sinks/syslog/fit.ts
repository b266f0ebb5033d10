/**
 * Keeps every message within `maxMessageBytes`. Receivers cut a longer one themselves,
 * silently (rsyslog truncates at its 8 KiB default and reads the rest as new, junk messages;
 * syslog-ng drops the connection past 64 KiB), so the sink decides first:
 *
 * - `truncate`: the document's longest strings are shortened (to a common length found by
 *   bisection, each ending in `…`) until the message fits, and the copy is marked: top-level
 *   `_truncated: <bytes before>` in the document, `truncated="<bytes>"` in the structured data,
 *   and `cn1=<bytes>` in CEF. Names, numbers and the structure stay; a document whose
 *   skeleton alone is too large becomes `{"_truncated": <bytes>}` (the key and time travel in
 *   the header). Only a header that cannot fit leaves the event oversize.
 * - `dead-letter`: the event is rejected (`syslog_oversize`), to be replayed once the
 *   receiver and `maxMessageBytes` are raised.
 */
import type { AuditEvent } from '../../event.ts';
import { lineSafeJson } from '../doc-json.ts';
import { bodyOf, encodeSyslogMessage, type MessageBody, type SyslogFormat } from './encoder.ts';

export type Fitted = { message: Buffer; truncatedFromBytes?: number } | { oversizeBytes: number };

export function fitMessage(event: AuditEvent, f: SyslogFormat, maxBytes: number, mode: 'truncate' | 'dead-letter'): Fitted {
  const body = bodyOf(event);
  const full = Buffer.from(encodeSyslogMessage(event, f, body), 'utf8');
  if (full.length <= maxBytes) return { message: full };
  if (mode === 'dead-letter') return { oversizeBytes: full.length };
  const from = full.length;
  const attempt = (doc: Record<string, unknown>): Buffer => {
    const marked = { ...doc, _truncated: from };
    const cut: MessageBody = { doc: marked, json: lineSafeJson(JSON.stringify(marked)), truncatedFromBytes: from };
    return Buffer.from(encodeSyslogMessage(event, f, cut), 'utf8');
  };
  // The largest common cap on string lengths that fits: bisection (the uncut length does not fit).
  let lo = 0;
  let hi = longestString(body.doc) - 1;
  let best: Buffer | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const m = attempt(capStrings(body.doc, mid) as Record<string, unknown>);
    if (m.length <= maxBytes) {
      best = m;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (best) return { message: best, truncatedFromBytes: from };
  const bare = attempt({});
  return bare.length <= maxBytes ? { message: bare, truncatedFromBytes: from } : { oversizeBytes: from };
}

function longestString(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) return v.reduce((m: number, x) => Math.max(m, longestString(x)), 0);
  if (v !== null && typeof v === 'object') return Object.values(v).reduce((m: number, x) => Math.max(m, longestString(x)), 0);
  return 0;
}

/** A copy with every string longer than `cap` UTF-16 units cut to `cap` (never inside a surrogate pair) plus `…`. */
function capStrings(v: unknown, cap: number): unknown {
  if (typeof v === 'string') {
    if (v.length <= cap) return v;
    let end = cap;
    const last = v.charCodeAt(end - 1);
    if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--;
    return `${v.slice(0, end)}…`;
  }
  if (Array.isArray(v)) return v.map((x) => capStrings(x, cap));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = capStrings(x, cap);
    return out;
  }
  return v;
}
