/**
 * The time one export window may spend waiting on the export's server: the request (its
 * retries included) and every read of its body. Time spent in the sinks is not charged (a
 * slow sink pauses the reading on purpose and has its own timeouts), so the budget measures
 * the server alone: a body that stalls or drips a byte at a time runs out of it, however
 * short each wait between chunks is.
 */
import { ErrorCodes, SyncError } from '../../errors.ts';

export class ReadBudget {
  private remainingMs: number;
  private readonly totalMs: number;

  constructor(totalMs: number) {
    this.totalMs = totalMs;
    this.remainingMs = totalMs;
  }

  /** The error a window fails with once the budget is spent. */
  expired(): SyncError {
    return new SyncError(
      ErrorCodes.EXPORT_DEADLINE,
      'transient',
      `audit-log export: the server took more than ${Math.round(this.totalMs / 1000)}s for one window (audit.limits.windowDeadlineSeconds); a stalled or dripping export`,
    );
  }

  /**
   * Waits for `wait()`, charging the time it takes. When the budget runs out first,
   * `onExpire` gets the deadline error (it must make `wait()` settle: abort the request,
   * destroy the body) and the wait rejects with it.
   */
  async charge<T>(wait: () => Promise<T>, onExpire: (e: SyncError) => void): Promise<T> {
    if (this.remainingMs <= 0) {
      const e = this.expired();
      onExpire(e);
      throw e;
    }
    const started = performance.now();
    let fired: SyncError | undefined;
    const timer = setTimeout(() => {
      fired = this.expired();
      onExpire(fired);
    }, this.remainingMs);
    try {
      const value = await wait();
      if (fired) throw fired;
      return value;
    } catch (e) {
      throw fired ?? e;
    } finally {
      clearTimeout(timer);
      this.remainingMs -= performance.now() - started;
    }
  }
}
