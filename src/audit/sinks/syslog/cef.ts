/**
 * ArcSight CEF: `CEF:0|Vendor|Product|Version|SignatureID|Name|Severity|Extension`.
 * Header fields escape `\` and `|` (newlines, not allowed there, become spaces);
 * extension values escape `\` and `=` and write newlines as `\n` / `\r` (a `|` needs no
 * escape there). Every other control character (C0, DEL, C1 with NEL, U+2028, U+2029) is
 * written `\uXXXX` in both, so a line never carries a raw NUL or a line break that a
 * line-splitting consumer or a C string would cut at; a literal backslash is `\\`, so the
 * notation cannot be confused with text. Extension keys are fixed identifiers from config.
 */
import { eventDoc, type AuditEvent } from '../../event.ts';
import { docField, fieldText } from '../doc-field.ts';
import { docJson } from '../doc-json.ts';

export interface CefOptions {
  vendor: string;
  product: string;
  version: string;
  signatureIdField: string;
  nameField: string;
  severity: number;
  extensions: Record<string, string>;
  includeDocument: boolean;
}

/** Control characters other than CR and LF, and the Unicode line separators. */
const CONTROLS = /[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]/g;

function escapeControls(v: string): string {
  return v.replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function escapeCefHeader(v: string): string {
  return escapeControls(
    v
      .replace(/\\/g, '\\\\')
      .replace(/\|/g, '\\|')
      .replace(/\r\n|[\r\n]/g, ' '),
  );
}

export function escapeCefValue(v: string): string {
  return escapeControls(v.replace(/\\/g, '\\\\').replace(/=/g, '\\=').replace(/\r/g, '\\r').replace(/\n/g, '\\n'));
}

/**
 * One CEF line. `doc`/`json` default to the event's document; a truncated copy passes its
 * own and `truncatedFromBytes`, which adds `cn1Label=truncatedFromBytes cn1=<bytes>`.
 */
export function encodeCef(
  event: AuditEvent,
  o: CefOptions,
  doc: Record<string, unknown> = eventDoc(event),
  json: string = docJson(event),
  truncatedFromBytes?: number,
): string {
  const sig = fieldText(docField(doc, o.signatureIdField)) ?? 'audit';
  const name = fieldText(docField(doc, o.nameField)) ?? sig;
  const header = ['CEF:0', o.vendor, o.product, o.version, sig, name].map((v, i) => (i === 0 ? v : escapeCefHeader(v)));
  const ext: string[] = [];
  if (Number.isFinite(event.timestampMs)) ext.push(`rt=${Math.trunc(event.timestampMs)}`);
  ext.push(`externalId=${escapeCefValue(event.key)}`);
  for (const [key, path] of Object.entries(o.extensions)) {
    const v = fieldText(docField(doc, path));
    if (v !== undefined) ext.push(`${key}=${escapeCefValue(v)}`);
  }
  if (o.includeDocument) ext.push('cs1Label=auditEvent', `cs1=${escapeCefValue(json)}`);
  if (truncatedFromBytes !== undefined) ext.push('cn1Label=truncatedFromBytes', `cn1=${truncatedFromBytes}`);
  return `${header.join('|')}|${o.severity}|${ext.join(' ')}`;
}
