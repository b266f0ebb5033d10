/**
 * Fault injection for the Entra simulator: Graph's throttling (429 `TooManyRequests` and
 * 503 `serviceNotAvailable`, both with Retry-After), a 500, a body cut short, a reset
 * connection, and an expired delta token (410). The first matching rule with budget fires.
 */
import { graphError } from './graph.ts';
import type { EntraFaultRule, EntraRoute, JsonReply } from './types.ts';

interface RuleState {
  rule: EntraFaultRule;
  seen: number;
  fired: number;
}

export class EntraFaults {
  private rules: RuleState[] = [];

  constructor(rules: EntraFaultRule[] = []) {
    this.set(rules);
  }

  set(rules: EntraFaultRule[]): void {
    this.rules = rules.map((rule) => ({ rule, seen: 0, fired: 0 }));
  }

  pick(route: EntraRoute, page: number | undefined): EntraFaultRule | undefined {
    for (const s of this.rules) {
      const r = s.rule;
      if (r.route !== undefined && r.route !== route) continue;
      if (r.route === undefined && (route === 'token' || route === 'metadata')) continue;
      if (r.page !== undefined && r.page !== page) continue;
      if (r.times !== undefined && s.fired >= r.times) continue;
      s.seen++;
      if (r.every !== undefined && s.seen % r.every !== 0) continue;
      s.fired++;
      return r;
    }
    return undefined;
  }
}

export function faultReply(rule: EntraFaultRule): JsonReply | undefined {
  const retryAfter = String(rule.retryAfterSeconds ?? 1);
  switch (rule.kind) {
    case 'throttle-429':
      return graphError(429, 'TooManyRequests', 'Too many requests.', { 'retry-after': retryAfter });
    case 'unavailable-503':
      return graphError(503, 'serviceNotAvailable', 'Service unavailable.', { 'retry-after': retryAfter });
    case 'server-error-500':
      return graphError(500, 'generalException', 'General exception while processing.');
    case 'delta-expired-410':
      return graphError(
        410,
        'syncStateNotFound',
        'The sync state generation is not found. Delta tokens may be expired; restart the synchronization with a full query.',
      );
    default:
      return undefined; // truncate / reset act on the real reply or the socket
  }
}
