/**
 * Platform HTTP client metrics on the shared registry, fed by the client's hooks through
 * observability/instrument.ts. `route` is the caller's fixed route name (e.g. `scim_users`),
 * never a path with an id in it.
 */
import { Counter, Histogram } from 'prom-client';
import { METRIC_PREFIX, registry } from '../observability/metrics.ts';

const p = `${METRIC_PREFIX}platform_`;

export const platformMetrics = {
  requests: new Counter({
    name: `${p}requests_total`,
    help: 'Requests to the platform API by method, route and HTTP status ("network" when no response arrived)',
    labelNames: ['tenant', 'method', 'route', 'status'] as const,
    registers: [registry],
  }),
  duration: new Histogram({
    name: `${p}request_duration_seconds`,
    help: 'Time to response headers of one request attempt to the platform API',
    labelNames: ['tenant', 'method', 'route'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], // seconds
    registers: [registry],
  }),
  retries: new Counter({
    name: `${p}retries_total`,
    help: 'Request attempts retried after a network error, 408, 429 or 5xx',
    labelNames: ['tenant', 'route'] as const,
    registers: [registry],
  }),
  rateLimited: new Counter({
    name: `${p}rate_limited_total`,
    help: 'HTTP 429 responses received from the platform',
    labelNames: ['tenant', 'route'] as const,
    registers: [registry],
  }),
  rateLimitWait: new Counter({
    name: `${METRIC_PREFIX}rate_limit_wait_seconds_total`,
    help: 'Time spent waiting for the global request limiter or a 429 Retry-After',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
};
