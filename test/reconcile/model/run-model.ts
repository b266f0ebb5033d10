/**
 * Runs the model-based reconcile test: for each generated sequence, a fresh simulator and
 * workspace, the initial directory synced, then every step with its invariants. Shared by
 * the CI test (seeded, small) and the soak script (longer, any seed).
 */
import fc from 'fast-check';
import type { ServerQuirk, Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, startSim, type Workspace } from '../../helpers/reconcile-harness.ts';
import type { DirectoryModel } from './directory-model.ts';
import { initialModel, stepArbitraries } from './commands.ts';
import { MAX_DELETE_PERCENT, MAX_DELETES, MAX_MEMBER_REMOVALS, RealSystem } from './system.ts';

/**
 * Real-server behaviours each sequence runs under (a random subset, see docs/simulator.md):
 * the promises must hold on every server, not only on a polite one.
 */
export const MODEL_QUIRKS: ServerQuirk[] = [
  'repeat-first-page',
  'case-sensitive-eq',
  'reject-escaped-filter',
  'created-without-id',
  'created-without-body',
  'unique-email-types',
];

export interface ModelRunOptions {
  ownership: 'ledger' | 'externalId';
  /** provisioning.deprovision.action (default deactivate). */
  deprovision?: 'deactivate' | 'delete';
  seed: number;
  numRuns: number;
  maxCommands: number;
  /** Simulator page cap: small values make every listing page. */
  maxPageSize?: number;
}

/** A fresh simulator and workspace for one sequence, the model's initial directory written, and the real side over them. */
export async function startModelWorld(
  opts: Pick<ModelRunOptions, 'ownership' | 'deprovision' | 'maxPageSize'>,
  pageSize: number,
  quirks: ServerQuirk[],
  model: DirectoryModel,
): Promise<{ sim: Simulator; ws: Workspace; real: RealSystem }> {
  let real: RealSystem | undefined;
  const sim = await startSim({ maxPageSize: opts.maxPageSize ?? pageSize, quirks, afterListPage: (e) => real?.onListPage(e) });
  const ws = createWorkspace(sim, {
    directory: model.toDirectory(),
    config: {
      provisioning: {
        ownership: { mode: opts.ownership },
        deprovision: { action: opts.deprovision ?? 'deactivate' },
        guards: {
          maxDeletes: MAX_DELETES,
          maxDeletePercent: MAX_DELETE_PERCENT,
          maxMemberRemovals: MAX_MEMBER_REMOVALS,
          maxMemberRemovalPercent: 100,
        },
      },
      platform: { scim: { pageSize: pageSize } },
    },
  });
  real = new RealSystem(sim, ws, opts.ownership, opts.deprovision ?? 'deactivate');
  return { sim, ws, real };
}

export async function runModel(opts: ModelRunOptions): Promise<void> {
  await fc.assert(
    fc.asyncProperty(
      fc.commands(stepArbitraries, { maxCommands: opts.maxCommands }),
      fc.integer({ min: 1, max: 4 }),
      fc.subarray(MODEL_QUIRKS),
      async (steps, pageSize, quirks) => {
        const model = initialModel();
        const { sim, real } = await startModelWorld(opts, pageSize, quirks, model);
        try {
          await real.sync(model);
          await fc.asyncModelRun(() => ({ model, real }), steps);
        } finally {
          await sim.close();
        }
      },
    ),
    { seed: opts.seed, numRuns: opts.numRuns },
  );
}
