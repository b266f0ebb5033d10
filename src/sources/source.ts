import type { DesiredState } from '../identity/model.ts';
import type { Logger } from '../observability/logger.ts';

/**
 * The source contract. `read()` returns the complete desired state or throws:
 * a partial read must never reach the planner, because a missing user would be deprovisioned.
 */
export interface Source {
  /** Short description for logs and plan headers, e.g. `file:config/examples/directory.yaml`. */
  readonly describe: string;
  read(signal?: AbortSignal): Promise<DesiredState>;
  /** Cheap read-only probe used by `validate --check-connectivity`. */
  check(signal?: AbortSignal): Promise<string>;
  close?(): Promise<void>;
}

/** The one log line of a complete directory read: counts, the source's own stats and how long it took. */
export function logDirectoryRead(
  logger: Pick<Logger, 'info'> | undefined,
  source: string,
  what: string,
  startedMs: number,
  state: DesiredState,
): DesiredState {
  logger?.info(
    {
      source,
      users: state.users.length,
      groups: state.groups.length,
      rejected: state.rejected.length,
      stats: state.stats,
      ms: Math.round(performance.now() - startedMs),
    },
    what,
  );
  return state;
}
