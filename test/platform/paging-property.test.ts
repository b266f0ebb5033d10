/**
 * "Never silently incomplete", as a property: whatever objects are created and deleted between
 * page requests (at the front, in the middle, at the end, or one of each: same totalResults),
 * a listing that returns holds every object that was alive during the whole listing, invents
 * none and repeats none; otherwise it fails with E_BAD_RESPONSE. Seeded and bounded. (An object
 * created during the listing may be missed: the next run sees it.)
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, SyncError } from '../../src/errors.ts';
import { listAllPages, type Page } from '../../src/platform/scim/paging.ts';

type Mutation = { kind: 'delete' | 'insert' | 'churn'; at: number } | { kind: 'none' };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Mutation>({ kind: 'none' }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('delete' as const, 'insert' as const, 'churn' as const), at: fc.nat(1000) }) },
);

describe('listAllPages under churn (property)', () => {
  it('returns every object alive throughout, or fails explicitly', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 40 }),
        // Pages of at least two: a server that caps pages at one object cannot be overlapped
        // (documented limit; there only the counts detect a shift).
        fc.integer({ min: 2, max: 9 }),
        fc.integer({ min: 2, max: 9 }),
        fc.array(mutation, { maxLength: 40 }),
        fc.boolean(),
        async (size, pageSize, serverCap, mutations, repeatFirstPage) => {
          let seq = 0;
          const live = Array.from({ length: size }, () => ({ id: `o${seq++}` }));
          const everAlive = new Set(live.map((o) => o.id));
          const deleted = new Set<string>();
          let step = 0;
          const mutate = (): void => {
            const m = mutations[step++];
            if (m === undefined || m.kind === 'none') return;
            if ((m.kind === 'delete' || m.kind === 'churn') && live.length > 0) {
              const [gone] = live.splice(m.at % live.length, 1);
              deleted.add(gone!.id);
            }
            if (m.kind === 'insert' || m.kind === 'churn') {
              const o = { id: `o${seq++}` };
              everAlive.add(o.id);
              if (m.kind === 'churn') live.push(o);
              else live.splice(m.at % (live.length + 1), 0, o);
            }
          };
          const fetchPage = async (startIndex: number, count: number): Promise<Page<{ id: string }>> => {
            const n = Math.min(count, serverCap);
            let from = startIndex - 1;
            if (repeatFirstPage && from >= live.length) from = 0;
            const page = { resources: live.slice(from, from + n).map((o) => ({ ...o })), totalResults: live.length };
            mutate(); // between this page and the next request
            return page;
          };
          const initial = new Set(live.map((o) => o.id));
          let result: { id: string }[];
          try {
            result = await listAllPages({ fetchPage, pageSize, what: 'list Users', limits: { probeDelayMs: 0 } });
          } catch (e) {
            expect(e).toBeInstanceOf(SyncError);
            expect((e as SyncError).code).toBe(ErrorCodes.BAD_RESPONSE);
            return;
          }
          const ids = result.map((r) => r.id);
          expect(new Set(ids).size).toBe(ids.length);
          for (const id of ids) expect(everAlive.has(id)).toBe(true);
          for (const id of initial) if (!deleted.has(id)) expect(ids).toContain(id);
        },
      ),
      { seed: 14, numRuns: 400 },
    );
  });
});
