/**
 * A lower bound of the directory server's clock, kept between polls without reading the local
 * wall clock: a server time observed (a change stamp in a search result, the root DSE's
 * `currentTime`) was reached by the server no later than the moment it was observed, and the
 * server's clock has moved on since by the time elapsed here (a monotonic clock), less a
 * margin for the two clocks running at different rates.
 *
 * `modify-timestamp` polling uses it to move its window forward while the directory is quiet:
 * without it, the window stays behind the latest change and every poll re-reads whatever
 * changed in the seconds before it (after a bulk load, thousands of entries every poll).
 */

/**
 * How much slower than this host's the server's clock may run: 1,000 ppm, ten times the worst
 * free-running crystal (NTP-disciplined clocks stay within a few ppm). Over an hour, 3.6 s.
 */
export const CLOCK_RATE_MARGIN = 1e-3;

export class ServerClock {
  private anchor: { server: number; at: number } | undefined;
  private readonly monotonic: () => number;

  /** `monotonic`: milliseconds that never go back (performance.now by default). */
  constructor(monotonic: () => number = () => performance.now()) {
    this.monotonic = monotonic;
  }

  now(): number {
    return this.monotonic();
  }

  /** The server's clock read `serverMs` at or before the monotonic moment `at`. */
  observe(serverMs: number, at: number = this.monotonic()): void {
    const projected = this.lowerBound(at);
    if (projected === undefined || serverMs > projected) this.anchor = { server: serverMs, at };
  }

  /**
   * The least the server's clock can read at the monotonic moment `at` (before the observation
   * too: it read the observed time then, so earlier it read at most the elapsed time less);
   * undefined before any observation.
   */
  lowerBound(at: number = this.monotonic()): number | undefined {
    if (this.anchor === undefined) return undefined;
    const elapsed = at - this.anchor.at;
    return this.anchor.server + elapsed * (elapsed >= 0 ? 1 - CLOCK_RATE_MARGIN : 1 + CLOCK_RATE_MARGIN);
  }

  /** Forgets what was observed (another server, or a cursor that starts over). */
  reset(): void {
    this.anchor = undefined;
  }
}
