/**
 * Fault injection for the Google simulator: each rule names a failure Google really
 * produces (rate limits as 429 or as 403 with a reason, backend errors, a cut body, a reset)
 * and where it strikes (route, page, group). The first matching rule with budget left fires.
 */
import { apiError, type JsonReply } from './errors.ts';
import type { GoogleFaultKind, GoogleFaultRule, GoogleRoute } from './types.ts';

export interface FaultTarget {
  route: GoogleRoute;
  page: number;
  groupKey?: string | undefined;
}

interface RuleState {
  rule: GoogleFaultRule;
  seen: number;
  fired: number;
}

export class GoogleFaults {
  private rules: RuleState[] = [];

  constructor(rules: GoogleFaultRule[] = []) {
    this.set(rules);
  }

  set(rules: GoogleFaultRule[]): void {
    this.rules = rules.map((rule) => ({ rule, seen: 0, fired: 0 }));
  }

  /** The fault to apply to this request, if any (consumes the rule's budget). */
  pick(t: FaultTarget): GoogleFaultRule | undefined {
    for (const s of this.rules) {
      const r = s.rule;
      if (r.route !== undefined && r.route !== t.route) continue;
      // The token endpoint has no 403 rate limits: a route-less 403 rule strikes the Directory API only.
      if (r.route === undefined && t.route === 'token' && (r.kind === 'user-rate-limit-403' || r.kind === 'rate-limit-403')) continue;
      if (r.page !== undefined && r.page !== t.page) continue;
      if (r.groupKey !== undefined && r.groupKey.toLowerCase() !== (t.groupKey ?? '').toLowerCase()) continue;
      s.seen++;
      if (s.seen <= (r.after ?? 0)) continue;
      if (r.every !== undefined && r.every > 1 && (s.seen - (r.after ?? 0)) % r.every !== 0) continue;
      if (r.times !== undefined && s.fired >= r.times) continue;
      s.fired++;
      return r;
    }
    return undefined;
  }
}

const retryAfter = (r: GoogleFaultRule): Record<string, string> | undefined =>
  r.retryAfterSeconds !== undefined ? { 'retry-after': String(r.retryAfterSeconds) } : undefined;

/** The error reply of a status fault, in the shape of the surface it hits. */
export function faultReply(r: GoogleFaultRule, route: GoogleRoute): JsonReply | undefined {
  const headers = retryAfter(r);
  const kind: GoogleFaultKind = r.kind;
  if (route === 'token') {
    if (kind === 'backend-error' || kind === 'unavailable')
      return {
        status: kind === 'unavailable' ? 503 : 500,
        json: { error: 'internal_failure', error_description: 'Backend Error' },
        ...(headers ? { headers } : {}),
      };
    if (kind === 'rate-limit-429')
      return {
        status: 429,
        json: { error: 'rate_limit_exceeded', error_description: 'Rate limit exceeded' },
        ...(headers ? { headers } : {}),
      };
  }
  const extra = headers ? { headers } : {};
  switch (kind) {
    case 'rate-limit-429':
      return apiError(
        429,
        "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'admin.googleapis.com'.",
        'rateLimitExceeded',
        { domain: 'usageLimits', ...extra },
      );
    case 'user-rate-limit-403':
      return apiError(
        403,
        "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user' of service 'admin.googleapis.com'.",
        'userRateLimitExceeded',
        { domain: 'usageLimits', ...extra },
      );
    case 'rate-limit-403':
      return apiError(403, 'Rate Limit Exceeded', 'rateLimitExceeded', { domain: 'usageLimits', ...extra });
    case 'backend-error':
      return apiError(500, 'Backend Error', 'backendError', extra);
    case 'unavailable':
      return apiError(503, 'The service is currently unavailable.', 'backendError', extra);
    default:
      return undefined;
  }
}
