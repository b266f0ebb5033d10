/**
 * Sink rejections go to the dead-letter store under the sink's name (the cursor still moves:
 * they are durable there), `replayDeadLetters` re-delivers them, and the same holds with the
 * state and dead letters in Redis.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { replayDeadLetters } from '../../src/audit/replay.ts';
import { auditStatus } from '../../src/audit/status.ts';
import { ErrorCodes } from '../../src/errors.ts';
import { eventDoc, type AuditEvent } from '../../src/audit/event.ts';
import { HOUR, T0, createHarness, duplicates, expectedIds, type Harness } from './support/harness.ts';
import { JsonlSink } from './support/jsonl-sink.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const isFailedLogin = (e: AuditEvent): boolean =>
  (eventDoc(e) as { platform: { audit: Record<string, string> } }).platform.audit['Event Name'] === 'Failed login attempt';
const sorted = (xs: string[]): string[] => [...xs].sort();

describe.each([{ redis: false }, { redis: true }])('dead letters and replay (redis: $redis)', ({ redis }) => {
  it('dead-letters a sink’s rejections, moves on, and replays them into that sink once', async () => {
    h = await createHarness({ nowMs: T0 + 2 * HOUR, redis, plain: { reject: isFailedLogin } });
    const s = await h.run();
    const all = expectedIds(h.sim, T0, T0 + 2 * HOUR);
    const failed = [...h.sim.audit.eventsIn(new Date(T0).toISOString(), new Date(T0 + 2 * HOUR).toISOString())]
      .filter((e) => e.eventName === 'Failed login attempt')
      .map((e) => e.id);
    expect(failed.length).toBeGreaterThan(5);
    expect(s.deadLettered['plain']).toBe(failed.length);
    expect(s.cursorMs).toBe(T0 + 2 * HOUR);
    expect(sorted(await h.sinkKeys())).toEqual(sorted(all));
    expect((await h.plainKeys()).length).toBe(all.length - failed.length);

    const status = await auditStatus({ tenant: h.tenant, state: h.state, deadLetters: h.deadLetters, now: () => h!.nowMs });
    expect(status).toMatchObject({ cursor: new Date(T0 + 2 * HOUR).toISOString(), lagSeconds: 0, deadLetters: { plain: failed.length } });

    // The destination was fixed: replay into the same sink, now accepting everything.
    const r = await replayDeadLetters(
      { tenant: h.tenant, deadLetters: h.deadLetters, sinks: [new JsonlSink('plain', h.plainPath)] },
      'plain',
      { batchSize: 7 },
    );
    expect(r).toMatchObject({ sink: 'plain', taken: failed.length, delivered: failed.length, rejectedAgain: 0 });
    const plain = await h.plainKeys();
    expect(duplicates(plain)).toEqual([]);
    expect(sorted(plain)).toEqual(sorted(all));
    expect((await h.deadLetters.counts())['plain'] ?? 0).toBe(0);

    // Nothing left: a second replay is a no-op.
    expect(
      (await replayDeadLetters({ tenant: h.tenant, deadLetters: h.deadLetters, sinks: [new JsonlSink('plain', h.plainPath)] }, 'plain'))
        .taken,
    ).toBe(0);
  });

  it('keeps events the sink rejects again, with the attempt counted', async () => {
    h = await createHarness({ nowMs: T0 + HOUR, redis, plain: { reject: isFailedLogin } });
    const s = await h.run();
    const n = s.deadLettered['plain'] ?? 0;
    expect(n).toBeGreaterThan(0);
    const r = await replayDeadLetters(
      { tenant: h.tenant, deadLetters: h.deadLetters, sinks: [new JsonlSink('plain', h.plainPath, { reject: isFailedLogin })] },
      'plain',
    );
    expect(r).toMatchObject({ taken: n, delivered: 0, rejectedAgain: n });
    const left = await h.deadLetters.peek('plain', 1000);
    expect(left).toHaveLength(n);
    expect(left.every((e) => e.attempts === 1 && e.event !== undefined)).toBe(true);
  });
});

describe('replay refusals', () => {
  it('refuses the _parse pseudo-sink and unknown sink names with a clear message', async () => {
    h = await createHarness({ nowMs: T0 + HOUR });
    const deps = { tenant: h.tenant, deadLetters: h.deadLetters, sinks: [new JsonlSink('plain', h.plainPath)] };
    await expect(replayDeadLetters(deps, '_parse')).rejects.toMatchObject({
      code: ErrorCodes.CONFIG_INVALID,
      message: expect.stringContaining('not events'),
    });
    await expect(replayDeadLetters(deps, 'nope')).rejects.toMatchObject({
      code: ErrorCodes.CONFIG_INVALID,
      message: expect.stringContaining('configured: plain'),
    });
  });
});

describe('redis state', () => {
  it('exports exactly once across runs with the state in Redis, and refuses a concurrent run', async () => {
    h = await createHarness({ nowMs: T0 + 3 * HOUR, redis: true });
    const first = h.run();
    await expect(h.run()).rejects.toMatchObject({ code: ErrorCodes.CONFLICT });
    await first;
    h.nowMs += 20 * 60_000;
    await h.run();
    const plain = await h.plainKeys();
    expect(duplicates(plain)).toEqual([]);
    expect(sorted(plain)).toEqual(sorted(expectedIds(h.sim, T0, h.nowMs)));
    expect((await h.state.load()).cursorMs).toBe(h.nowMs);
  });
});
