/**
 * A Google listing is bounded whatever the server hands out: a server that never stops giving
 * new page tokens fails at the page bound, and a listing past its deadline fails, each with
 * its code and nothing returned.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCodes, SyncError } from '../../src/errors.ts';
import { listAll, type CallEnv } from '../../src/sources/google/paged.ts';

const env: CallEnv = {
  policy: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 1 },
  classify: { clientEmail: 'sa@example.iam.gserviceaccount.com', clientId: '1', subject: 'admin@example.com', scopes: [] },
};

/** A server whose every page names a new next page. */
function endless(delayMs = 0): (token: string | undefined) => Promise<{ data: unknown }> {
  let n = 0;
  return async () => {
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    n++;
    return { data: { users: [{ id: String(n) }], nextPageToken: `t${n}` } };
  };
}

describe('Google listing bounds', () => {
  it('a server that never stops handing out page tokens fails at maxPages with E_LISTING_TOO_LARGE', async () => {
    const items: unknown[] = [];
    const err = await listAll('users.list', 'users', endless(), env, (p) => items.push(...p), { maxPages: 5, deadlineMs: 60_000 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SyncError);
    expect((err as SyncError).code).toBe(ErrorCodes.LISTING_TOO_LARGE);
    expect(items).toHaveLength(5);
  });

  it('a listing past its deadline fails with E_LISTING_DEADLINE (transient)', async () => {
    const err = await listAll('users.list', 'users', endless(30), env, () => undefined, { maxPages: 1_000, deadlineMs: 100 }).catch(
      (e: unknown) => e,
    );
    expect((err as SyncError).code).toBe(ErrorCodes.LISTING_DEADLINE);
    expect((err as SyncError).kind).toBe('transient');
  });

  it('a listing within its bounds returns its page count', async () => {
    let n = 0;
    const pages = await listAll(
      'users.list',
      'users',
      async () => ({ data: ++n < 3 ? { users: [{ id: String(n) }], nextPageToken: `t${n}` } : { users: [] } }),
      env,
      () => undefined,
      { maxPages: 3, deadlineMs: 60_000 },
    );
    expect(pages).toBe(3);
  });
});
