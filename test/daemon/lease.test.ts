/** The fenced run lease on real Redis: tokens only grow, a takeover fences the earlier holder out, loss aborts. */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireRunLease, checkFence } from '../../src/jobs/lease.ts';
import { SHARED_REDIS_URL } from '../helpers/daemon-harness.ts';

const redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
const prefix = `lease-test-${randomUUID().slice(0, 8)}`;
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

const keysFor = (name: string): [string, string] => [`${prefix}:${name}:lease`, `${prefix}:${name}:fence`];
const codeOf = (e: unknown): unknown => (e as { code?: unknown }).code;

describe('run lease with a fencing token', () => {
  it('issues growing tokens; another owner is refused; the same job recovered takes it over and fences the stalled holder out', async () => {
    const [lease, fence] = keysFor('takeover');
    const first = await acquireRunLease(redis, lease, fence, 'job:1', 5_000);
    expect(first?.fence).toBe(1);
    expect(await acquireRunLease(redis, lease, fence, 'job:2', 5_000)).toBeUndefined();
    const recovered = await acquireRunLease(redis, lease, fence, 'job:1', 5_000);
    expect(recovered?.fence).toBe(2);
    expect(await checkFence(redis, lease, 1)).toBe('taken');
    expect(await checkFence(redis, lease, 2)).toBe('held');
    await expect(first!.assertHeld()).rejects.toSatisfy((e) => codeOf(e) === 'E_LEASE_LOST');
    expect(first!.signal.aborted).toBe(true);
    await recovered!.assertHeld();
    // The fenced-out holder's release leaves the new holder's lease alone.
    await first!.release();
    expect(await checkFence(redis, lease, 2)).toBe('held');
    await recovered!.release();
    expect(await checkFence(redis, lease, 2)).toBe('gone');
    const next = await acquireRunLease(redis, lease, fence, 'job:3', 5_000);
    expect(next?.fence).toBe(3);
    await next!.release();
  });

  it('rolling upgrade: a lease held by a replica of an earlier version (value = owner alone) is respected, and its own job takes it over', async () => {
    const [lease, fence] = keysFor('upgrade');
    await redis.set(lease, 'job:9', 'PX', 5_000);
    expect(await acquireRunLease(redis, lease, fence, 'job:2', 5_000)).toBeUndefined();
    const taken = await acquireRunLease(redis, lease, fence, 'job:9', 5_000);
    expect(taken?.fence).toBe(1);
    expect(await redis.get(lease)).toBe('1 job:9');
    await taken!.release();
  });

  it('renews itself, and aborts its signal when the lease disappears (Redis lost its data)', async () => {
    const [lease, fence] = keysFor('gone');
    const held = await acquireRunLease(redis, lease, fence, 'job:1', 600);
    await new Promise((r) => setTimeout(r, 900));
    // Renewed past its first 600 ms.
    expect(await checkFence(redis, lease, held!.fence)).toBe('held');
    expect(held!.signal.aborted).toBe(false);
    await redis.del(lease);
    await new Promise((r) => setTimeout(r, 400));
    expect(held!.signal.aborted).toBe(true);
    expect(codeOf(held!.signal.reason)).toBe('E_LEASE_LOST');
    expect(String((held!.signal.reason as Error).message)).toMatch(/gone from Redis/);
    await held!.release();
  });
});
