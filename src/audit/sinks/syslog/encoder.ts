/**
 * RFC 5424 messages in RFC 6587 octet-counting frames: `<len> <PRI>1 TIMESTAMP HOSTNAME
 * APP-NAME PROCID MSGID [SD] MSG`, `len` in bytes. MSG is UTF-8 without a BOM (several
 * receivers choke on it). Header fields are printable ASCII; anything else becomes `_`.
 */
import { eventDoc, type AuditEvent } from '../../event.ts';
import { docField, fieldText } from '../doc-field.ts';
import { encodeCef, type CefOptions } from './cef.ts';

export interface SyslogFormat {
  pri: number;
  hostname: string;
  appName: string;
  procId: string;
  msgidField: string;
  sdId: string | undefined;
  format: 'json' | 'cef';
  cef: CefOptions;
}

/** NILVALUE for empty, printable ASCII only, bounded. */
export function headerField(v: string | undefined, max: number): string {
  if (v === undefined || v === '') return '-';
  const clean = v.replace(/[^\x21-\x7e]/g, '_').slice(0, max);
  return clean === '' ? '-' : clean;
}

/** PARAM-VALUE escaping (RFC 5424 §6.3.3): `"`, `\` and `]`. */
export function escapeSdValue(v: string): string {
  return v.replace(/[\\"\]]/g, (c) => `\\${c}`);
}

export function encodeSyslogMessage(event: AuditEvent, f: SyslogFormat): string {
  if (!Number.isFinite(event.timestampMs)) throw new Error('event has no valid timestamp');
  const ts = new Date(event.timestampMs).toISOString();
  const doc = eventDoc(event);
  const msgid = headerField(fieldText(docField(doc, f.msgidField)), 32);
  const sd = f.sdId ? `[${f.sdId} key="${escapeSdValue(event.key)}"]` : '-';
  const msg = f.format === 'cef' ? encodeCef(event, f.cef, doc) : event.json;
  return `<${f.pri}>1 ${ts} ${headerField(f.hostname, 255)} ${headerField(f.appName, 48)} ${headerField(f.procId, 128)} ${msgid} ${sd} ${msg}`;
}

/** RFC 6587 octet counting: the length prefix counts bytes, not characters. */
export function frame(message: string): Buffer {
  const body = Buffer.from(message, 'utf8');
  return Buffer.concat([Buffer.from(`${body.length} `, 'ascii'), body]);
}

export function encodeSyslogFrame(event: AuditEvent, f: SyslogFormat): Buffer {
  return frame(encodeSyslogMessage(event, f));
}
