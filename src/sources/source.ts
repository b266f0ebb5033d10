import type { DesiredState } from '../identity/model.ts';

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
