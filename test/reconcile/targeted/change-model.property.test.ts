/**
 * Model-based property test of the change path (change-model.ts): random source edits as
 * deltas, notifications dropped, duplicated and reordered, targeted runs checked against the
 * full plan, full reconciles at random points. Seeded and bounded for CI;
 * TARGETED_MODEL_RUNS / TARGETED_MODEL_SEED / TARGETED_MODEL_COMMANDS run it longer (a soak).
 * A shrunk counterexample becomes a named scenario in targeted-counterexamples.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { runChangeModel } from './change-model.ts';

const env = (name: string, fallback: number): number => {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : Number(v);
};

describe('change model: targeted runs never write what a full run would not, and the next full run converges', () => {
  for (const [ownership, deprovision, seed] of [
    ['ledger', 'deactivate', 20261128],
    ['externalId', 'deactivate', 1128],
    ['ledger', 'delete', 281126],
  ] as const) {
    it(`ownership.mode ${ownership}, deprovision.action ${deprovision}`, async () => {
      const stats = await runChangeModel({
        ownership,
        deprovision,
        seed: env('TARGETED_MODEL_SEED', seed),
        numRuns: env('TARGETED_MODEL_RUNS', 10),
        maxCommands: env('TARGETED_MODEL_COMMANDS', 10),
      });
      if (process.env['TARGETED_MODEL_VERBOSE']) console.log(JSON.stringify(stats));
      // The targeted path was taken and wrote, not deferred every time.
      expect(stats.targeted).toBeGreaterThan(0);
      expect(stats.writes).toBeGreaterThan(0);
    }, 300_000);
  }
});
