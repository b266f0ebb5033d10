/**
 * Okta's per-endpoint rate limits as headers show them: every response of a bucket carries
 * X-Rate-Limit-Limit, X-Rate-Limit-Remaining and X-Rate-Limit-Reset (epoch seconds when the
 * window ends); a request past the limit is a 429 E0000047 with the same headers. Windows
 * are fixed (they start with the first request after the previous one ended), which is
 * what a client can observe of Okta's per-minute windows.
 */
export type OktaBucket = 'users' | 'user' | 'groups' | 'group-users' | 'rules' | 'token';

/** Okta's documented defaults (requests per minute) for the endpoints the source reads. */
export const DEFAULT_LIMITS: Record<OktaBucket, number> = {
  users: 600,
  user: 600,
  groups: 500,
  'group-users': 1000,
  rules: 500,
  token: 600,
};

interface Window {
  endsMs: number;
  used: number;
}

export class RateLimiter {
  private readonly windows = new Map<OktaBucket, Window>();
  limits: Record<OktaBucket, number>;
  windowSeconds: number;

  constructor(limits: Partial<Record<OktaBucket, number>> = {}, windowSeconds = 60) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.windowSeconds = windowSeconds;
  }

  /** Count one request; `allowed: false` means answer 429. */
  take(bucket: OktaBucket, nowMs = Date.now()): { allowed: boolean; headers: Record<string, string> } {
    let w = this.windows.get(bucket);
    if (!w || nowMs >= w.endsMs) {
      // Ends on a whole second: X-Rate-Limit-Reset has one-second resolution.
      w = { endsMs: Math.ceil((nowMs + this.windowSeconds * 1000) / 1000) * 1000, used: 0 };
      this.windows.set(bucket, w);
    }
    const limit = this.limits[bucket];
    const allowed = w.used < limit;
    if (allowed) w.used++;
    return {
      allowed,
      headers: {
        'x-rate-limit-limit': String(limit),
        'x-rate-limit-remaining': String(Math.max(0, limit - w.used)),
        'x-rate-limit-reset': String(w.endsMs / 1000),
      },
    };
  }

  reset(): void {
    this.windows.clear();
  }
}
