/**
 * Operator commands against a running deployment (they talk to its Redis):
 * `trigger reconcile|audit|audit-verify`, `resume --tenant T`, `approve-deletes --tenant T`, `status`.
 */
import { Command, type Option } from 'commander';
import type { LoadedConfig } from '../config/load.ts';
import type { Control } from '../jobs/control.ts';
import { ConfigError } from '../errors.ts';
import { ExitCode, runCommand } from './exit-codes.ts';
import { configOption, jsonOption, tenantOption as baseTenantOption } from './options.ts';
import { paint, printJson } from './output.ts';
import { printable } from '../observability/printable.ts';

async function triggerRun(...args: Parameters<typeof import('../jobs/schedulers.ts').triggerRun>): Promise<string | undefined> {
  const { triggerRun: run } = await import('../jobs/schedulers.ts');
  return run(...args);
}

async function withControl<T>(configPath: string, fn: (c: Control, all: LoadedConfig[]) => Promise<T>): Promise<T> {
  const { loadAllTenants } = await import('../config/load.ts');
  // Redis only: the platform credential is not needed here, so it is not read (or required).
  const all = await loadAllTenants(configPath, process.env, { platformCredential: false });
  // Loaded on demand: other commands never pay for BullMQ.
  const { connectControl } = await import('../jobs/control.ts');
  const control = await connectControl(all);
  try {
    return await fn(control, all);
  } finally {
    await control.close();
  }
}

const tenantOption = (): Option => baseTenantOption('tenant id (default: every tenant of the config, or the only one)');

function pickTenants(all: LoadedConfig[], tenant: string | undefined): string[] {
  return tenant ? [tenant] : all.map((l) => l.config.tenant);
}

export function triggerCommand(): Command {
  return new Command('trigger')
    .description('enqueue an immediate run (deduplicated: repeated triggers collapse into one waiting run)')
    .argument('<kind>', 'reconcile, audit or audit-verify')
    .addOption(configOption())
    .addOption(tenantOption())
    .action(
      runCommand(async (kind: string, opts: { config: string; tenant?: string }) => {
        if (kind !== 'reconcile' && kind !== 'audit' && kind !== 'audit-verify') {
          process.stderr.write(`error: kind must be reconcile, audit or audit-verify, not ${JSON.stringify(kind)}\n`);
          return ExitCode.CONFIG;
        }
        return withControl(opts.config, async (c, all) => {
          for (const t of pickTenants(all, opts.tenant)) {
            const { loaded } = c.tenant(t);
            const id = await triggerRun(
              kind === 'reconcile' ? c.queues.reconcile : c.queues.audit,
              kind,
              t,
              loaded.config.daemon.jobAttempts,
            );
            process.stdout.write(`${kind} run for tenant ${t} enqueued (job ${id})\n`);
          }
          return ExitCode.OK;
        });
      }),
    );
}

/**
 * A command acting on one tenant of a running deployment: `--config`, `--tenant` (needed only
 * when the config has several tenants), its Control.
 */
function tenantCommand(name: string, description: string, act: (c: Control, tenant: string) => Promise<number>): Command {
  return new Command(name)
    .description(description)
    .addOption(configOption())
    .addOption(baseTenantOption('tenant id (needed when the config has several tenants; default: the only one)'))
    .action(
      runCommand(async (opts: { config: string; tenant?: string }) =>
        withControl(opts.config, (c, all) => act(c, oneTenant(all, opts.tenant, name))),
      ),
    );
}

/** `--tenant`, or the config's only tenant; several tenants and no `--tenant` is a usage error naming them. */
function oneTenant(all: LoadedConfig[], tenant: string | undefined, command: string): string {
  if (tenant !== undefined) return tenant;
  const ids = all.map((l) => l.config.tenant);
  if (ids.length === 1 && ids[0] !== undefined) return ids[0];
  throw new ConfigError(`${command}: the config has ${ids.length} tenants; say which one`, [`--tenant: one of ${ids.join(', ')}`]);
}

export function resumeCommand(): Command {
  return tenantCommand('resume', 'end the quarantine of a tenant and run its reconcile now', async (c, tenant) => {
    const { state, loaded } = c.tenant(tenant);
    const before = await state.quarantine();
    await state.clearQuarantine();
    const id = await triggerRun(c.queues.reconcile, 'reconcile', tenant, loaded.config.daemon.jobAttempts);
    process.stdout.write(
      before.quarantined
        ? `tenant ${tenant} resumed (was quarantined: ${before.reason}); reconcile enqueued (job ${id})\n`
        : `tenant ${tenant} was not quarantined; reconcile enqueued (job ${id})\n`,
    );
    return ExitCode.OK;
  });
}

export function approveDeletesCommand(): Command {
  return tenantCommand(
    'approve-deletes',
    'approve the deletions held by the deletion guard: the next reconcile of the tenant runs them (starts one now)',
    async (c, tenant) => {
      const { state, loaded } = c.tenant(tenant);
      // Bound to what is held: a larger plan trips the guard again.
      const held = await state.approveHeld(process.env['USER'] ?? 'operator');
      if (!held) {
        process.stdout.write(`tenant ${tenant} has no deletions held by the guard; nothing to approve\n`);
        return ExitCode.OK;
      }
      const id = await triggerRun(c.queues.reconcile, 'reconcile', tenant, loaded.config.daemon.jobAttempts, 'approval');
      process.stdout.write(
        `approved ${held.count} held deactivations/deletions, ${held.memberRemovals ?? 0} member removals and ${held.attributeClears ?? 0} user attribute take-aways of tenant ${tenant} (${held.reasons.join('; ')}); a plan removing more trips the guard again; reconcile enqueued (job ${id})\n`,
      );
      return ExitCode.OK;
    },
  );
}

export function statusCommand(): Command {
  return new Command('status')
    .description('per tenant: last runs, next schedule, audit cursor and lag, quarantine, held deletes (same as /status)')
    .addOption(configOption())
    .addOption(jsonOption())
    .action(
      runCommand(async (opts: { config: string; json?: boolean }) =>
        withControl(opts.config, async (c) => {
          const doc = await c.status();
          if (opts.json) {
            printJson(doc);
            return ExitCode.OK;
          }
          const lines: string[] = [];
          for (const t of doc.tenants as Array<Record<string, unknown>>) {
            const q = t['quarantine'] as { quarantined: boolean; until: string | null; reason: string; failures: number } | undefined;
            const held = t['heldDeletes'] as { count: number; reasons: string[]; approved: boolean } | null;
            const runs = t['runs'] as
              | { reconcile: Array<{ result: string; finishedAt: string }>; audit: Array<{ result: string; finishedAt: string }> }
              | undefined;
            const audit = t['audit'] as { cursor: string | null; lagSeconds: number | null; deadLetters: Record<string, number> } | null;
            const next = t['nextRun'] as { reconcile: string | null; audit: string | null } | undefined;
            lines.push(paint('bold', `tenant ${printable(String(t['tenant']))}`));
            const last = (r?: Array<{ result: string; finishedAt: string }>): string =>
              r && r[0] ? printable(`${r[0].result} at ${r[0].finishedAt}`) : 'never';
            lines.push(`  reconcile: last ${last(runs?.reconcile)}; next ${next?.reconcile ?? 'not scheduled'}`);
            lines.push(`  audit:     last ${last(runs?.audit)}; next ${next?.audit ?? 'not scheduled'}`);
            const changes = t['changes'] as
              | {
                  state: string;
                  mechanism: string | null;
                  owner: string | null;
                  lagSeconds: number | null;
                  lastDeferred: { code: string } | null;
                }
              | null
              | undefined;
            if (changes && changes.state !== 'off')
              lines.push(
                `  changes:   ${changes.state === 'running' ? `running on ${printable(changes.owner ?? '?')}` : paint('yellow', changes.state)} (${printable(changes.mechanism ?? '?')}); last poll ${changes.lagSeconds === null ? 'never' : `${changes.lagSeconds} s ago`}${changes.lastDeferred ? `; last full reconcile asked: ${printable(changes.lastDeferred.code)}` : ''}`,
              );
            const managed = t['managed'] as { users: number; groups: number } | undefined;
            const unmanaged = t['unmanagedSkipped'] as { users: number; groups: number } | null | undefined;
            if (managed) {
              const skipped = unmanaged
                ? `; skipped as unmanaged in the last plan: ${unmanaged.users} users, ${unmanaged.groups} groups`
                : '';
              const hint =
                managed.users + managed.groups === 0 && unmanaged && unmanaged.users + unmanaged.groups > 0
                  ? paint('yellow', ' (empty ledger: import it with scim-audit-sync ledger import)')
                  : '';
              lines.push(`  managed:   ${managed.users} users, ${managed.groups} groups${skipped}${hint}`);
            }
            if (audit)
              lines.push(
                `  cursor:    ${printable(audit.cursor ?? 'none yet')}; lag ${audit.lagSeconds === null ? 'n/a' : `${Math.round(audit.lagSeconds)} s`}; dead letters ${JSON.stringify(audit.deadLetters)}`,
              );
            lines.push(
              `  quarantine: ${q?.quarantined ? paint('red', `YES until ${q.until} (${printable(q.reason)}); resume with: scim-audit-sync resume --tenant ${String(t['tenant'])}`) : `no (${q?.failures ?? 0} consecutive failures)`}`,
            );
            lines.push(
              `  held deletes: ${held ? paint('red', `${held.count} (${printable(held.reasons.join('; '))})${held.approved ? ' — approved, runs next' : `; approve with: scim-audit-sync approve-deletes --tenant ${String(t['tenant'])}`}`) : 'none'}`,
            );
          }
          lines.push(...renderQueues(doc.queues));
          process.stdout.write(`${lines.join('\n')}\n`);
          return ExitCode.OK;
        }),
      ),
    );
}

/** `queues:` then one aligned line per queue, `waiting 0, active 1, …` (the JSON output keeps the raw counts). */
export function renderQueues(queues: Record<string, Record<string, number>>): string[] {
  const entries = Object.entries(queues);
  const width = Math.max(0, ...entries.map(([name]) => name.length));
  return [
    'queues:',
    ...entries.map(([name, counts]) => {
      const parts = Object.entries(counts).map(([state, n]) =>
        n > 0 && state === 'failed' ? paint('yellow', `${state} ${n}`) : `${state} ${n}`,
      );
      return `  ${`${name}:`.padEnd(width + 1)} ${parts.join(', ')}`;
    }),
  ];
}
