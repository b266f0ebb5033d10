/**
 * RFC 5424 messages: `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [SD] MSG`, framed for
 * TCP/TLS by octet counting (RFC 6587 `<len> <msg>`, len in bytes) or by a trailing LF
 * (non-transparent framing; any line break inside is escaped first). MSG is UTF-8 without a
 * BOM (several receivers choke on it). Header fields are printable ASCII; anything else
 * becomes `_`.
 */
import { eventDoc, type AuditEvent } from '../../event.ts';
import { docField, fieldText } from '../doc-field.ts';
import { docJson } from '../doc-json.ts';
import { encodeCef, type CefOptions } from './cef.ts';

export type SyslogFraming = 'octet-counting' | 'lf';

export interface SyslogFormat {
  pri: number;
  hostname: string;
  appName: string;
  procId: string;
  msgidField: string;
  sdId: string | undefined;
  format: 'json' | 'cef';
  cef: CefOptions;
  framing: SyslogFraming;
}

/** The document a message is built from: the event's own, or a truncated copy (see fit.ts). */
export interface MessageBody {
  doc: Record<string, unknown>;
  json: string;
  /** Set on a truncated copy: the size in bytes of the message before truncation. */
  truncatedFromBytes?: number;
}

export function bodyOf(event: AuditEvent): MessageBody {
  return { doc: eventDoc(event), json: docJson(event) };
}

/** NILVALUE for empty, printable ASCII only, bounded. */
export function headerField(v: string | undefined, max: number): string {
  if (v === undefined || v === '') return '-';
  const clean = v.replace(/[^\x21-\x7e]/g, '_').slice(0, max);
  return clean === '' ? '-' : clean;
}

/** Control characters and the Unicode line separators. */
const CONTROLS = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/g;

/**
 * PARAM-VALUE escaping (RFC 5424 §6.3.3): `"`, `\` and `]`. Control characters and line
 * separators (legal there, but a line-based reader would cut at them) are written `\uXXXX`.
 */
export function escapeSdValue(v: string): string {
  return v.replace(/[\\"\]]/g, (c) => `\\${c}`).replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** For LF framing: no raw CR or LF may remain inside a message (the encoders leave none; this is the backstop). */
export function escapeLineBreaks(message: string): string {
  return /[\r\n]/.test(message) ? message.replace(/\r/g, '\\r').replace(/\n/g, '\\n') : message;
}

export function encodeSyslogMessage(event: AuditEvent, f: SyslogFormat, body: MessageBody = bodyOf(event)): string {
  if (!Number.isFinite(event.timestampMs)) throw new Error('event has no valid timestamp');
  const ts = new Date(event.timestampMs).toISOString();
  const msgid = headerField(fieldText(docField(body.doc, f.msgidField)), 32);
  const marker = body.truncatedFromBytes === undefined ? '' : ` truncated="${body.truncatedFromBytes}"`;
  const sd = f.sdId ? `[${f.sdId} key="${escapeSdValue(event.key)}"${marker}]` : '-';
  const msg = f.format === 'cef' ? encodeCef(event, f.cef, body.doc, body.json, body.truncatedFromBytes) : body.json;
  const m = `<${f.pri}>1 ${ts} ${headerField(f.hostname, 255)} ${headerField(f.appName, 48)} ${headerField(f.procId, 128)} ${msgid} ${sd} ${msg}`;
  return f.framing === 'lf' ? escapeLineBreaks(m) : m;
}

/** One frame: RFC 6587 octet counting (the prefix counts bytes, not characters) or message + LF. */
export function frame(message: string | Buffer, framing: SyslogFraming = 'octet-counting'): Buffer {
  const body = typeof message === 'string' ? Buffer.from(message, 'utf8') : message;
  return framing === 'lf' ? Buffer.concat([body, LF]) : Buffer.concat([Buffer.from(`${body.length} `, 'ascii'), body]);
}

const LF = Buffer.from('\n');
