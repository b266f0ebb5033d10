/** The classified error a promise rejects with; fails the test when it resolves or rejects with something else. */
import { SyncError } from '../../src/errors.ts';

export async function rejection(p: Promise<unknown>): Promise<SyncError> {
  const outcome = await p.then(
    () => ({ resolved: true as const }),
    (err: unknown) => ({ resolved: false as const, err }),
  );
  if (outcome.resolved) throw new Error('expected a rejection, the promise resolved');
  if (!(outcome.err instanceof SyncError)) throw new Error(`expected a SyncError, got ${String(outcome.err)}`);
  return outcome.err;
}
