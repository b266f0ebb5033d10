/**
 * A change source polled as the daemon polls it: each poll passes the cursor of the previous
 * answer, and keeps the new one.
 */
import type { ChangeSource, SourceChanges, SourceDelta } from '../../src/sources/changes.ts';

export class ChangeFeed {
  /** The cursor the next poll passes (undefined: none yet, the first answer is a full read). */
  cursor: string | undefined;
  private readonly source: () => ChangeSource;

  /** `source` is asked on each poll, so a test may set it up after creating the feed. */
  constructor(source: () => ChangeSource) {
    this.source = source;
  }

  /** One poll with the kept cursor; the next cursor is kept. */
  async poll(): Promise<SourceChanges> {
    const r = await this.source().changes(this.cursor);
    this.cursor = r.cursor;
    return r;
  }

  /** One poll that must answer with a delta. */
  async delta(): Promise<SourceDelta> {
    const r = await this.poll();
    if (r.kind !== 'delta') throw new Error(`expected a delta, got a full read (${r.reason}: ${r.detail ?? ''})`);
    return r;
  }
}
