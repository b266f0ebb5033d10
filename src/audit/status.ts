/** `audit status`: where the cursor is, how far behind, backfill progress, dead letters. No lease needed. */
import type { DeadLetterStore } from './dead-letter/store.ts';
import type { AuditObserver } from './observer.ts';
import type { AuditStateStore } from './state/store.ts';

export interface AuditStatus {
  tenant: string;
  store: string;
  cursor: string | null;
  cursorMs: number | null;
  /** now − cursor, seconds. */
  lagSeconds: number | null;
  lastCommit: string | null;
  checkpointAgeSeconds: number | null;
  /** Keys remembered for the overlap window. */
  dedupeKeys: number;
  columns: string[] | null;
  backfill: { from: string; to: string; startedAt: string; ratio: number } | null;
  deadLetters: Record<string, number>;
  deadLetterStore: string;
  /** Window digests for `audit verify`: from when they cover every event, and how many windows are held. */
  digests: { since: string | null; windowMinutes: number | null; windows: number };
}

export async function auditStatus(deps: {
  tenant: string;
  state: AuditStateStore;
  deadLetters: DeadLetterStore;
  now?: () => number;
  observer?: AuditObserver;
}): Promise<AuditStatus> {
  const nowMs = (deps.now ?? Date.now)();
  const [st, counts] = await Promise.all([deps.state.load(), deps.deadLetters.counts()]);
  deps.observer?.({ type: 'state', cursorMs: st.cursorMs, updatedAtMs: st.updatedAtMs, nowMs });
  const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
  const bf = st.backfill;
  return {
    tenant: deps.tenant,
    store: deps.state.describe,
    cursor: iso(st.cursorMs),
    cursorMs: st.cursorMs,
    lagSeconds: st.cursorMs === null ? null : Math.round((nowMs - st.cursorMs) / 1000),
    lastCommit: iso(st.updatedAtMs),
    checkpointAgeSeconds: st.updatedAtMs === null ? null : Math.round((nowMs - st.updatedAtMs) / 1000),
    dedupeKeys: st.dedupe.length,
    columns: st.columns,
    backfill: bf
      ? {
          from: new Date(bf.fromMs).toISOString(),
          to: new Date(bf.toMs).toISOString(),
          startedAt: new Date(bf.startedAtMs).toISOString(),
          ratio:
            bf.toMs <= bf.fromMs || st.cursorMs === null ? 0 : Math.min(1, Math.max(0, (st.cursorMs - bf.fromMs) / (bf.toMs - bf.fromMs))),
        }
      : null,
    deadLetters: counts,
    deadLetterStore: deps.deadLetters.describe,
    digests: {
      since: iso(st.digests.sinceMs),
      windowMinutes: st.digests.windowMs === null ? null : st.digests.windowMs / 60_000,
      windows: st.digests.windows.length,
    },
  };
}
