/**
 * ArcSight CEF: `CEF:0|Vendor|Product|Version|SignatureID|Name|Severity|Extension`.
 * Header fields escape `\` and `|` (newlines, not allowed there, become spaces);
 * extension values escape `\` and `=` and write newlines as `\n` / `\r` (a `|` needs no
 * escape there). Extension keys are fixed identifiers from config.
 */
import { eventDoc, type AuditEvent } from '../../event.ts';
import { docField, fieldText } from '../doc-field.ts';

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

export function escapeCefHeader(v: string): string {
  return v
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/\r\n|[\r\n]/g, ' ');
}

export function escapeCefValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/=/g, '\\=').replace(/\r/g, '\\r').replace(/\n/g, '\\n');
}

export function encodeCef(event: AuditEvent, o: CefOptions, doc: Record<string, unknown> = eventDoc(event)): string {
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
  if (o.includeDocument) ext.push('cs1Label=auditEvent', `cs1=${escapeCefValue(event.json)}`);
  return `${header.join('|')}|${o.severity}|${ext.join(' ')}`;
}
