/**
 * Shrunk counterexamples of the change model (change-model.ts), kept as named scenarios:
 * each replays the exact sequence of edits and notifications that once broke a promise.
 */
import { describe, expect, it } from 'vitest';
import { groupEdit, initialModel, joiner, leaver } from '../model/commands.ts';
import { startModelWorld } from '../model/run-model.ts';
import { ChangeSystem, type ChangeModelStats } from './change-model.ts';

async function replay(
  steps: Array<[ReturnType<typeof leaver>, 'deliver' | 'drop' | 'duplicate' | 'hold', boolean]>,
  opts: { deprovision?: 'deactivate' | 'delete' } = {},
): Promise<ChangeModelStats> {
  const model = initialModel();
  const stats: ChangeModelStats = { targeted: 0, deferred: {}, writes: 0 };
  const { sim, ws, real } = await startModelWorld({ ownership: 'ledger', ...opts }, 1, [], model);
  const ctx = await ws.context();
  try {
    const sys = new ChangeSystem(real, ctx, stats);
    await sys.full(model);
    for (const [step, notification, full] of steps) await sys.change(model, step.edit, notification, full);
    await sys.full(model);
  } finally {
    await ctx.close();
    await sim.close();
  }
  return stats;
}

describe('change model counterexamples', () => {
  it("a group's deletion notified late, after a new group took its name: the full run hands the platform group over", async () => {
    const stats = await replay(
      [
        [groupEdit(0, 'delete'), 'hold', false],
        [groupEdit(0, 'create'), 'deliver', true],
      ],
      { deprovision: 'delete' },
    );
    // The new group's targeted run met the old group holding the name and deferred.
    expect(stats.deferred['name-held']).toBe(1);
  });

  it("a joiner given an earlier leaver's userName defers (name-held), the leaver's account is not handed over", async () => {
    const stats = await replay([
      [leaver(0), 'deliver', true],
      [joiner(0, 'leaver-name'), 'deliver', false],
    ]);
    expect(stats.deferred['name-held']).toBe(1);
  });
});
