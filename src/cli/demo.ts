/**
 * `scim-audit-sync demo` (what `npm run demo` runs): starts the platform simulator in this
 * process, plans and applies config/examples/, prints the plan and the summary, then a
 * second plan that shows zero changes. No Redis, no network beyond loopback.
 */
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { createLogger } from '../observability/logger.ts';
import { renderApplyResult, renderPlan } from '../reconcile/render.ts';
import { ExitCode, runCommand } from './exit-codes.ts';
import { paint } from './output.ts';
import { createProgress } from './progress.ts';

const EXAMPLES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'config', 'examples');

export function demoCommand(): Command {
  return new Command('demo')
    .description('run the whole flow against the built-in platform simulator: plan, apply, plan again')
    .addOption(new Option('--config <file>', 'demo config').default(join(EXAMPLES, 'config.demo.yaml')))
    .action(runCommand((opts: { config: string }) => runDemo(opts.config)));
}

export async function runDemo(configPath: string, out: NodeJS.WriteStream = process.stdout): Promise<number> {
  const token = `demo-${Math.random().toString(36).slice(2)}`;
  const [{ startSimulator }, { loadConfig }, { applyReconcile, planReconcile }, { buildReconcileContext }] = await Promise.all([
    import('../simulator/index.ts'),
    import('../config/load.ts'),
    import('../reconcile/engine.ts'),
    import('../reconcile/from-config.ts'),
  ]);
  const auditFrom = new Date(Date.now() - 6 * 3_600_000);
  const sim = await startSimulator({ tokens: [{ token }], seed: 42, audit: { startAt: auditFrom.toISOString(), eventsPerHour: 400 } });
  const color = out.isTTY === true;
  const say = (s: string): void => void out.write(`${s}\n`);
  try {
    const loaded = await loadConfig(configPath, {
      ...process.env,
      SIM_URL: sim.url,
      SIM_TOKEN: token,
      DEMO_AUDIT_FROM: auditFrom.toISOString(),
    });
    await rm(resolve(loaded.configDir, loaded.config.state.dir), { recursive: true, force: true });
    // Warnings only, readable on a terminal: the demo's output is the plan and the summaries.
    const logger = createLogger({ level: 'warn', pretty: process.stderr.isTTY === true });
    say(paint('bold', `Platform simulator listening on ${sim.url} (empty tenant)`, out));
    say(paint('bold', `Source: ${resolve(loaded.configDir, 'directory.yaml')}`, out));
    say('');

    const ctx = await buildReconcileContext(loaded, logger);
    try {
      say(paint('bold', '== 1. plan ==', out));
      const first = await planReconcile(ctx, { allowDeletes: false });
      say(renderPlan(first.plan, { color, maxRows: 12 }));
      say('');
      say(paint('bold', '== 2. apply ==', out));
      const progress = createProgress({ label: 'apply' });
      const result = await applyReconcile(ctx, first, { onProgress: (p) => progress.update(p) });
      progress.stop();
      say(renderApplyResult(result, { color }));
      say(`  platform now holds ${sim.store.users().length} users and ${sim.store.groups().length} groups`);
      say('');
      say(paint('bold', '== 3. plan again (expect no changes) ==', out));
      const second = await planReconcile(ctx, { allowDeletes: false });
      say(renderPlan(second.plan, { color, maxRows: 0 }));
      say('');
      say(paint('bold', '== 4. audit export into a file sink ==', out));
      const { runAuditFromConfig } = await import('../audit/run-from-config.ts');
      const audit = await runAuditFromConfig(loaded, logger);
      const s = audit.summary;
      say(
        `  events read ${s.eventsRead}, delivered ${JSON.stringify(s.delivered)}, dead-lettered ${JSON.stringify(s.deadLettered)}, duplicates skipped ${s.duplicatesSkipped}`,
      );
      say(`  cursor now ${s.cursorMs === null ? 'none' : new Date(s.cursorMs).toISOString()}`);
      for (const o of audit.outputs) if (o.path) say(paint('green', `  audit events written to ${o.path}`, out));
      const failed = result.failed.length > 0 || Object.values(s.deadLettered).some((n) => n > 0);
      if (failed) return ExitCode.FAILED;
      return second.plan.summary.changes === 0 ? ExitCode.OK : ExitCode.FAILED;
    } finally {
      await ctx.close();
    }
  } finally {
    await sim.close();
  }
}
