/** One provisioning-log record as text: the `log` command's lines and the status page's cells share these words. */
import { printable } from '../observability/printable.ts';
import type { ProvisioningRecord } from './record.ts';

const short = (v: unknown): string => {
  if (v === null || v === undefined) return '∅';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}…` : s;
};

export function objectLabel(r: ProvisioningRecord): string {
  const o = r.object;
  const parts = [o.name ?? o.externalId ?? o.id ?? '?'];
  if (o.externalId !== undefined && o.externalId !== o.name) parts.push(`externalId ${o.externalId}`);
  if (o.id !== undefined) parts.push(`id ${o.id}`);
  return `${o.type} ${parts[0]}${parts.length > 1 ? ` (${parts.slice(1).join(', ')})` : ''}`;
}

/** `path: before → after` per attribute, and member additions/removals. */
export function changeSummary(r: ProvisioningRecord): string[] {
  const out = (r.changes ?? []).map((c) => `${c.path}: ${short(c.before)} → ${short(c.after)}`);
  const m = r.members;
  if (m) {
    const list = (names: string[], count: number): string =>
      `${names.slice(0, 10).join(', ')}${count > Math.min(10, names.length) ? ` … (${count} in all)` : ''}`;
    if (m.addedCount > 0) out.push(`members added: ${list(m.added, m.addedCount)}`);
    if (m.removedCount > 0) out.push(`members removed: ${list(m.removed, m.removedCount)}`);
  }
  return out;
}

export function outcomeText(r: ProvisioningRecord): string {
  if (r.result === 'failed') return `failed [${r.error?.code ?? 'E_UNEXPECTED'}] ${r.error?.message ?? ''}`.trim();
  if (r.result === 'held') return r.reason ?? 'held by the deletion guard';
  return r.reason !== undefined ? `ok (${r.reason})` : 'ok';
}

/** One record as terminal lines; every value in it is escaped (printable.ts), so a name cannot format the terminal. */
export function renderRecord(r: ProvisioningRecord): string {
  const head = `${printable(r.time)}  ${printable(r.result).padEnd(6)}  ${printable(r.action).padEnd(15)}  ${printable(objectLabel(r))}  run ${printable(r.runId)}`;
  const lines = [head];
  if (r.result !== 'ok' || r.reason !== undefined) lines.push(`    ${printable(outcomeText(r))}`);
  for (const c of changeSummary(r)) lines.push(`    ${printable(c)}`);
  return lines.join('\n');
}
