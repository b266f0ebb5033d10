/**
 * Human rendering of plans and apply results: grouped tables, colour only on a TTY.
 * The JSON form is the Plan object itself (plan-types.ts).
 */
import { styleText } from 'node:util';
import type { ApplyResult } from './apply.ts';
import type { AttributeChange, Plan } from './plan-types.ts';
import { attributeSections, attributeSummaryLine } from './attributes/render.ts';
import { printable } from '../observability/printable.ts';

type Style = Parameters<typeof styleText>[0];

export interface RenderOptions {
  color: boolean;
  /** Max rows per section before "… and N more". */
  maxRows?: number;
}

export function renderPlan(plan: Plan, opts: RenderOptions): string {
  const c = (style: Style, s: string): string => (opts.color ? styleText(style, s) : s);
  const max = opts.maxRows ?? 50;
  const out: string[] = [];
  const s = plan.summary;
  out.push(c('bold', `Plan for tenant ${printable(plan.tenant)} from ${printable(plan.source)}`));
  out.push(
    `  users:   ${c('green', `+${s.usersCreate} create`)}, ${c('yellow', `~${s.usersUpdate} update`)}, ${c('cyan', `↑${s.usersReactivate} reactivate`)}, ${c('red', `-${s.usersDeactivate} deactivate`)}, ${c('red', `✗${s.usersDelete} delete`)}`,
  );
  out.push(
    `  groups:  ${c('green', `+${s.groupsCreate} create`)}, ${c('yellow', `~${s.groupsUpdate} update`)}, ${c('red', `✗${s.groupsDelete} delete`)}`,
  );
  out.push(`  members: ${c('green', `+${s.membersAdd} add`)}, ${c('red', `-${s.membersRemove} remove`)}`);
  const attrLine = attributeSummaryLine(plan, c);
  if (attrLine) out.push(attrLine);
  const rejected = rejectedLine(plan);
  if (s.changes === 0)
    out.push(
      rejected === undefined
        ? c('green', '  No changes. The platform matches the source.')
        : c('magenta', `  No changes, but ${rejected}: the platform matches the rest of the source.`),
    );
  else if (rejected !== undefined) out.push(c('magenta', `  ${rejected}: left out, the rest is planned.`));

  const section = (title: string, style: Style, rows: string[][]): void => {
    if (rows.length === 0) return;
    // maxRows 0 asks for counts only: one line, never a heading with nothing under it.
    if (max === 0) return void out.push(`  ${title.toLowerCase()}: ${rows.length} (use --json to list them)`);
    out.push('', c(['bold', style] as unknown as Style, `${title} (${rows.length})`));
    // Every cell is data (names, values, reasons quoting them): escaped, so none can format the terminal.
    out.push(...table(rows.slice(0, max).map((r) => r.map(printable))).map((l) => `  ${l}`));
    if (rows.length > max) out.push(`  … and ${rows.length - max} more (use --json for the full plan)`);
  };
  section(
    'Users to create',
    'green',
    plan.users.create.map((u) => [u.userName, u.externalId, String((u.resource as { displayName?: string }).displayName ?? '')]),
  );
  section(
    'Users to update',
    'yellow',
    plan.users.update.map((u) => [
      u.userName,
      u.adopt ? 'adopt' : u.renameVia !== undefined ? 'via temporary name' : '',
      changesText(u.changes),
    ]),
  );
  section(
    'Users to reactivate',
    'cyan',
    plan.users.reactivate.map((u) => [u.userName, changesText(u.changes)]),
  );
  section(
    'Users to deactivate',
    'red',
    plan.users.deactivate.map((u) => [u.userName, u.reason]),
  );
  section(
    'Users to delete',
    'red',
    plan.users.delete.map((u) => [u.userName, u.reason, u.freesName ? 'first: another user takes its userName' : '']),
  );
  section(
    'Groups to create',
    'green',
    plan.groups.create.map((g) => [g.displayName, g.externalId]),
  );
  section(
    'Groups to update',
    'yellow',
    plan.groups.update.map((g) => [
      g.displayName,
      g.adopt ? 'adopt' : g.renameVia !== undefined ? 'via temporary name' : '',
      changesText(g.changes),
    ]),
  );
  section(
    'Groups to delete',
    'red',
    plan.groups.delete.map((g) => [g.displayName, g.externalId, g.freesName ? 'first: another group takes its name' : '']),
  );
  section(
    'Membership changes',
    'yellow',
    plan.memberships.map((m) => [
      m.group.displayName,
      `+${m.add.length}`,
      `-${m.remove.length}`,
      names([
        ...m.add.map((r) => `+${r.userName ?? r.externalId ?? r.id}`),
        ...m.remove.map((r) => `-${r.userName ?? r.externalId ?? r.id}`),
      ]),
    ]),
  );
  attributeSections(plan, section);
  section(
    'Skipped',
    'gray',
    plan.skipped.map((k) => [k.kind, k.ref, k.reason]),
  );
  section(
    'Rejected by the source',
    'magenta',
    plan.rejected.map((r) => [r.kind, r.ref, r.reason]),
  );
  // Older plan files (schema 1 before these fields) have neither list.
  section(
    'Protected (source entry rejected)',
    'magenta',
    (plan.protected ?? []).map((p) => [p.kind, p.name, p.held, p.rejection]),
  );
  section(
    'Warnings',
    'yellow',
    (plan.warnings ?? []).map((w) => [w.code, w.ref, w.message]),
  );
  section(
    "Identity conflicts (not created: the name is held by another person's account)",
    'magenta',
    (plan.conflicts ?? []).map((k) => [
      k.name,
      k.externalId,
      `${k.wants}: held by ${k.account.userName} (${k.account.id}, ${k.account.owner}, ${k.account.active ? 'active' : 'inactive'})`,
      k.waysOut.join(' | '),
    ]),
  );

  if (plan.guard.tripped) {
    out.push(
      '',
      c(
        ['bold', 'red'] as unknown as Style,
        'DELETION GUARD TRIPPED: no deactivation, deletion, member removal or attribute take-away will run.',
      ),
    );
    for (const r of plan.guard.reasons) out.push(c('red', `  - ${printable(r)}`));
    out.push('  Check the source first; if the removals are intended, re-run apply with --allow-deletes or raise provisioning.guards.');
  } else if (plan.guard.overridden) {
    out.push('', c('yellow', `Deletion guard exceeded but overridden by --allow-deletes: ${printable(plan.guard.reasons.join('; '))}`));
  }
  return out.join('\n');
}

/**
 * `4 entries rejected by the source (listed below)`, with user-attribute values the source
 * gave but the type refused and newcomers held by an identity conflict (their name is held by
 * another person's account); undefined when nothing was left out.
 */
export function rejectedLine(plan: Plan): string | undefined {
  const entries = plan.summary.rejected;
  const values = plan.attributes?.summary.rejected ?? 0;
  const conflicts = plan.summary.conflicts ?? 0;
  if (entries + values + conflicts === 0) return undefined;
  const parts: string[] = [];
  if (entries > 0) parts.push(`${entries} ${entries === 1 ? 'entry' : 'entries'} rejected by the source`);
  if (values > 0) parts.push(`${values} user-attribute ${values === 1 ? 'value' : 'values'} rejected`);
  if (conflicts > 0) parts.push(`${conflicts} identity ${conflicts === 1 ? 'conflict' : 'conflicts'} held`);
  return `${parts.join(' and ')} (listed below)`;
}

/** `plan`: the plan applied; its rejected entries are named in the headline. */
export function renderApplyResult(result: ApplyResult, opts: RenderOptions, plan?: Plan): string {
  const c = (style: Style, s: string): string => (opts.color ? styleText(style, s) : s);
  const out: string[] = [];
  const ok = Object.entries(result.succeeded).map(([k, v]) => `${k} ${v}`);
  out.push(c('bold', `Applied in ${(result.durationMs / 1000).toFixed(1)}s`));
  const rejected = plan ? rejectedLine(plan) : undefined;
  if (rejected !== undefined) {
    const h = result.held;
    const held = h.usersDeactivate + h.usersDelete + h.groupsDelete + h.membersRemove + (h.attributeTakeAways ?? 0);
    const clean = result.failed.length === 0 && result.aborted === undefined && held === 0;
    out.push(
      c(
        'magenta',
        `  ${rejected.replace(' (listed below)', ' (listed in the plan above)')}: not applied${clean ? '; the platform matches the rest' : ''}`,
      ),
    );
  }
  out.push(`  succeeded: ${ok.length > 0 ? ok.join(', ') : 'nothing to do'}`);
  out.push(`  members: +${result.membersAdded} / -${result.membersRemoved}`);
  const h = result.held;
  if (h.usersDeactivate + h.usersDelete + h.groupsDelete + h.membersRemove > 0) {
    out.push(
      c(
        'red',
        `  held by the deletion guard: ${h.usersDeactivate} deactivations, ${h.usersDelete} user deletions, ${h.groupsDelete} group deletions, ${h.membersRemove} member removals`,
      ),
    );
  }
  if ((h.attributeTakeAways ?? 0) > 0)
    out.push(
      c('red', `  held by the deletion guard: ${h.attributeTakeAways} user attribute values taken away (clears, access-relevant changes)`),
    );
  if (result.failed.length > 0) {
    out.push(c('red', `  failed: ${result.failed.length}`));
    out.push(...table(result.failed.slice(0, 50).map((f) => [f.action, f.ref, f.code, f.message].map(printable))).map((l) => `    ${l}`));
    if (result.failed.length > 50) out.push(`    … and ${result.failed.length - 50} more (use --json)`);
  }
  if (result.aborted) out.push(c('red', `  aborted: ${printable(result.aborted)}`));
  return out.join('\n');
}

function changesText(changes: AttributeChange[]): string {
  return changes.map((ch) => `${ch.path}: ${short(ch.before)} → ${short(ch.after)}`).join('; ');
}

function short(v: unknown): string {
  if (v === null || v === undefined) return '∅';
  const s = typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

function names(list: string[]): string {
  const shown = list.slice(0, 6).join(' ');
  return list.length > 6 ? `${shown} …` : shown;
}

function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((cell, i) => (widths[i] = Math.min(Math.max(widths[i] ?? 0, cell.length), 48)));
  return rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}
