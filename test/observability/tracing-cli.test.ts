/**
 * One-shot commands traced like the daemon's runs: with an OTLP endpoint set, `apply` run by
 * the shipped CLI is one trace — the command's root span, the source read, the platform
 * listing and the plan under it, and every platform request a client span — flushed before the
 * process exits; nothing personal or secret in it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createWorkspace, people, SIM_TOKEN, startSim } from '../helpers/reconcile-harness.ts';
import { startOtlpReceiver, traceOf, type OtlpReceiver } from '../helpers/receivers/otlp-receiver.ts';
import type { Simulator } from '../../src/simulator/index.ts';

let sim: Simulator | undefined;
let otlp: OtlpReceiver | undefined;
afterEach(async () => {
  await sim?.close();
  await otlp?.close();
  sim = otlp = undefined;
});

describe('traces of one-shot commands', () => {
  it('apply is one trace: the command at its root, the engine spans and the platform requests under it, flushed before exit', async () => {
    sim = await startSim();
    otlp = await startOtlpReceiver();
    const users = people(1, 3);
    const ws = createWorkspace(sim, {
      directory: { users, groups: [{ externalId: 'g1', displayName: 'Staff', members: [users[0]!.externalId] }] },
    });
    const run = await ws.apply(['--yes'], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } });
    expect(run.code).toBe(0);
    const root = otlp.spans.find((s) => s.name === 'scim-audit-sync apply');
    expect(root, 'the command span').toBeDefined();
    expect(root!.parentSpanId).toBe('');
    expect(root!.attributes['process.exit.code']).toBe(0);
    const t = traceOf(otlp.spans, root!.traceId);
    expect(t.unparented()).toEqual([root]);
    for (const name of ['reconcile source read', 'reconcile platform listing', 'reconcile plan']) {
      expect(t.named(name), name).toHaveLength(1);
    }
    // Three users and one group created: each POST a client span (kind 3) of this trace.
    const posts = t.spans.filter((s) => s.kind === 3 && s.attributes['http.request.method'] === 'POST');
    expect(posts.length).toBe(4);
    const sent = otlp.requests.map((r) => r.body.toString('utf8')).join('\n');
    expect(sent).not.toContain(SIM_TOKEN);
    for (const u of users) expect(sent).not.toContain(u.userName);
  });
});
