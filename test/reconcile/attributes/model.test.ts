/**
 * Model-based: random sequences of source edits (values set, changed, emptied, made invalid)
 * and platform drift, each followed by plan → apply against the simulator in-process. After
 * every step: every managed user's platform values are what the rules say (coerced value;
 * `clear` empties, `keep` and a rejected value leave the platform's value), the unmanaged
 * user is untouched, and the next plan changes nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coerce } from '../../../src/reconcile/attributes/coerce.ts';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, startSim, type DirUser } from '../../helpers/reconcile-harness.ts';
import { staff, userId } from './support.ts';

const USERS = [1, 2, 3];
const RULES = [
  { name: 'region', type: 'string', from: 'attributes.l', whenMissing: 'clear' },
  { name: 'teams', type: 'string_array', from: 'attributes.teams', split: ';', whenMissing: 'keep' },
  { name: 'level', type: 'number', from: 'attributes.level', whenMissing: 'clear', accessRelevant: false },
] as const;
type AttrName = (typeof RULES)[number]['name'];
const SOURCE_KEY: Record<AttrName, string> = { region: 'l', teams: 'teams', level: 'level' };

type Step =
  | { kind: 'source'; user: number; attr: AttrName; value: unknown }
  | { kind: 'drift'; user: number; attr: AttrName; value: unknown };

const sourceValue: Record<AttrName, fc.Arbitrary<unknown>> = {
  region: fc.constantFrom(undefined, '', 'eu', 'us', 'EU', ['eu', 'us']),
  teams: fc.constantFrom(undefined, '', 'a', 'a;b', ['b', 'a'], 'c'),
  level: fc.constantFrom(undefined, 1, '2', 'x', '3.5', true),
};
const driftValue: Record<AttrName, fc.Arbitrary<unknown>> = {
  region: fc.constantFrom(null, 'zz', 'eu'),
  teams: fc.constantFrom(null, ['z'], ['a', 'b']),
  level: fc.constantFrom(null, 9, 1),
};
const attr = fc.constantFrom<AttrName>('region', 'teams', 'level');
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .record({ user: fc.constantFrom(...USERS), attr })
      .chain(({ user, attr: a }) => sourceValue[a].map((value): Step => ({ kind: 'source', user, attr: a, value }))),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ user: fc.constantFrom(...USERS), attr })
      .chain(({ user, attr: a }) => driftValue[a].map((value): Step => ({ kind: 'drift', user, attr: a, value }))),
  },
);

/** What the platform must hold for one attribute after apply, from the source value and the value before apply. */
function expected(rule: (typeof RULES)[number], raw: unknown, before: unknown): unknown {
  const c = coerce(raw, rule.type, 'split' in rule ? { split: rule.split } : {});
  if (!c.ok) return before;
  if (c.value === null) return rule.whenMissing === 'keep' ? before : undefined;
  return c.value;
}

function sortIfArray(v: unknown): unknown {
  return Array.isArray(v) ? [...v].sort() : v;
}

describe('user attributes model', () => {
  it('converges after every source edit and drift, never touches the unmanaged user, and leaves nothing to do', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), async (steps) => {
        const sim: Simulator = await startSim();
        try {
          const attrs = new Map<number, Record<string, unknown>>(USERS.map((n) => [n, { l: 'eu' }]));
          const directory = (): { users: DirUser[]; groups: [] } => ({
            users: USERS.map((n) => staff(n, { ...attrs.get(n) })),
            groups: [],
          });
          const ws = createWorkspace(sim, {
            directory: directory(),
            config: {
              provisioning: {
                userAttributes: RULES,
                userAttributeSync: { rereadAfterHours: 0 },
                guards: { maxAttributeClears: 1000, maxAttributeClearPercent: 100 },
              },
            },
          });
          // A hand-made region definition and an unmanaged user holding a value.
          sim.attributes.createDefinition({ name: 'region', type: 'string' });
          const outsider = sim.store.createUser({ userName: 'outsider@example.com' });
          sim.attributes.setValueByName(outsider.id, 'region', 'keep-me');
          expect((await ws.applyInProcess()).result.failed).toEqual([]);

          for (const s of steps) {
            if (s.kind === 'source') {
              const a = { ...attrs.get(s.user) };
              if (s.value === undefined) delete a[SOURCE_KEY[s.attr]];
              else a[SOURCE_KEY[s.attr]] = s.value;
              attrs.set(s.user, a);
              ws.writeDirectory(directory());
            } else {
              sim.attributes.setValueByName(userId(sim, `user${s.user}@example.com`), s.attr, s.value);
            }
            const before = new Map(USERS.map((n) => [n, sim.attributes.valuesOf(userId(sim, `user${n}@example.com`))]));
            const { result } = await ws.applyInProcess();
            expect(result.failed).toEqual([]);
            for (const n of USERS) {
              const have = sim.attributes.valuesOf(userId(sim, `user${n}@example.com`));
              for (const rule of RULES) {
                const want = expected(rule, attrs.get(n)?.[SOURCE_KEY[rule.name]], before.get(n)?.[rule.name]);
                expect(sortIfArray(have[rule.name]), `user${n} ${rule.name} after ${JSON.stringify(s)}`).toEqual(sortIfArray(want));
              }
            }
            expect(sim.attributes.valuesOf(outsider.id)).toEqual({ region: 'keep-me' });
            const next = await ws.planInProcess();
            expect(next.attributes?.users).toEqual([]);
          }
        } finally {
          await sim.close();
        }
      }),
      { numRuns: 25, seed: 1717 },
    );
  }, 120_000);
});
