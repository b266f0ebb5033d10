/**
 * Human rendering of plans and apply results: grouped tables, colour only on a TTY.
 * The JSON form is the Plan object itself (plan-types.ts).
 */
import { styleText } from 'node:util';
import type { ApplyResult } from './apply.ts';
import type { AttributeChange, Plan } from './plan-types.ts';
import { attributeSections, attributeSummaryLine } from './attributes/render.ts'; // [h17]

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
  out.push(c('bold', `Plan for tenant ${plan.tenant} from ${plan.source}`));
  out.push(
    `  users:   ${c('green', `+${s.usersCreate} create`)}, ${c('yellow', `~${s.usersUpdate} update`)}, ${c('cyan', `↑${s.usersReactivate} reactivate`)}, ${c('red', `-${s.usersDeactivate} deactivate`)}, ${c('red', `✗${s.usersDelete} delete`)}`,
  );
  out.push(
    `  groups:  ${c('green', `+${s.groupsCreate} create`)}, ${c('yellow', `~${s.groupsUpdate} update`)}, ${c('red', `✗${s.groupsDelete} delete`)}`,
  );
  out.push(`  members: ${c('green', `+${s.membersAdd} add`)}, ${c('red', `-${s.membersRemove} remove`)}`);
  const attrLine = attributeSummaryLine(plan, c); // [h17 user attributes]
  if (attrLine) out.push(attrLine);
  if (s.changes === 0) out.push(c('green', '  No changes. The platform matches the source.'));

  const section = (title: string, style: Style, rows: string[][]): void => {
    if (rows.length === 0) return;
    // maxRows 0 asks for counts only: one line, never a heading with nothing under it.
    if (max === 0) return void out.push(`  ${title.toLowerCase()}: ${rows.length} (use --json to list them)`);
    out.push('', c(['bold', style] as unknown as Style, `${title} (${rows.length})`));
    out.push(...table(rows.slice(0, max)).map((l) => `  ${l}`));
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
  attributeSections(plan, section); // [h17 user attributes]
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
    for (const r of plan.guard.reasons) out.push(c('red', `  - ${r}`));
    out.push('  Check the source first; if the removals are intended, re-run apply with --allow-deletes or raise provisioning.guards.');
  } else if (plan.guard.overridden) {
    out.push('', c('yellow', `Deletion guard exceeded but overridden by --allow-deletes: ${plan.guard.reasons.join('; ')}`));
  }
  return out.join('\n');
}

export function renderApplyResult(result: ApplyResult, opts: RenderOptions): string {
  const c = (style: Style, s: string): string => (opts.color ? styleText(style, s) : s);
  const out: string[] = [];
  const ok = Object.entries(result.succeeded).map(([k, v]) => `${k} ${v}`);
  out.push(c('bold', `Applied in ${(result.durationMs / 1000).toFixed(1)}s`));
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
    ); // [h17]
  if (result.failed.length > 0) {
    out.push(c('red', `  failed: ${result.failed.length}`));
    out.push(...table(result.failed.slice(0, 50).map((f) => [f.action, f.ref, f.code, f.message])).map((l) => `    ${l}`));
    if (result.failed.length > 50) out.push(`    … and ${result.failed.length - 50} more (use --json)`);
  }
  if (result.aborted) out.push(c('red', `  aborted: ${result.aborted}`));
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
