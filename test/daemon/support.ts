/** Small readers shared by the daemon tests (log lines across replicas, metrics, docs). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import {
  createDaemonWorkspace,
  metricValue,
  waitFor,
  type DaemonProcess,
  type DaemonWorkspace,
  type LogLine,
} from '../helpers/daemon-harness.ts';
import { startSim, writeRequests } from '../helpers/reconcile-harness.ts';

/**
 * Simulators and daemon workspaces that close after each test of the calling file (in reverse
 * order of creation). Call once at the top level of a test file.
 */
export function closingAfterEach(): {
  sim(token: string, opts?: Parameters<typeof startSim>[0]): Promise<Simulator>;
  workspace(env: Record<string, string>): DaemonWorkspace;
} {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return {
    async sim(token, opts = {}) {
      const s = await startSim({ tokens: [{ token }], ...opts });
      cleanups.push(() => s.close());
      return s;
    },
    workspace(env) {
      const ws = createDaemonWorkspace({ env });
      cleanups.push(() => ws.cleanup());
      return ws;
    },
  };
}

/** `"<kind> run finished"` lines of every process, oldest first. */
export function runsFinished(daemons: DaemonProcess[], kind: 'reconcile' | 'audit'): LogLine[] {
  return daemons.flatMap((d) => d.logs.filter((l) => l.msg === `${kind} run finished`)).sort((a, b) => a.time - b.time);
}

/** A sample summed over the replicas' /metrics texts (0 when absent everywhere). */
export function sumMetric(texts: string[], name: string, labels: Record<string, string> = {}): number {
  return texts.reduce((n, t) => n + (metricValue(t, name, labels) ?? 0), 0);
}

/** Metric families listed in docs/metrics.md (the prom-client `process_*` wildcard left out). */
export function documentedMetricNames(): string[] {
  const doc = readFileSync(join(import.meta.dirname, '../../docs/metrics.md'), 'utf8');
  const names = [...doc.matchAll(/^\| `(scimsync_[a-z_]+)`/gm)].map((m) => m[1]!);
  if (names.length < 20) throw new Error('docs/metrics.md: metric tables not found');
  return names;
}

/**
 * Triggers one more reconcile and expects it to find nothing to do: no write request reaches
 * the platform and the plan has no changes (so the ledger in Redis is complete).
 */
export async function expectNothingLeft(ws: DaemonWorkspace, d: DaemonProcess, sim: Simulator): Promise<void> {
  const writes = (): number => writeRequests(sim).length;
  const before = writes();
  const done = runsFinished([d], 'reconcile').length;
  await ws.trigger();
  const line = await waitFor(() => runsFinished([d], 'reconcile')[done], 'one more reconcile', 20_000);
  expect(line['result']).toBe('success');
  const plan = d.logs.filter((l) => l.msg.startsWith('reconcile plan')).at(-1);
  expect((plan?.['summary'] as { changes: number } | undefined)?.changes).toBe(0);
  expect(writes()).toBe(before);
}
