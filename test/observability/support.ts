/** Shared test support: a log capture stream and a realistic plan built by the real planner. */
import { Writable } from 'node:stream';
import { provisioningSchema } from '../../src/config/schema.ts';
import type { NormalizedUser } from '../../src/identity/model.ts';
import { createLogger, type Logger } from '../../src/observability/logger.ts';
import type { ScimUser } from '../../src/platform/scim/types.ts';
import { Ledger } from '../../src/reconcile/ledger.ts';
import type { Plan } from '../../src/reconcile/plan-types.ts';
import { buildPlan } from '../../src/reconcile/planner.ts';

export interface Capture {
  logger: Logger;
  text(): string;
  records(): Record<string, unknown>[];
}

export function captureLogger(level: 'debug' | 'info' = 'debug'): Capture {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = createLogger({ level, destination: stream });
  const text = (): string => chunks.join('');
  return {
    logger,
    text,
    records: () =>
      text()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

function user(ext: string, extra: Partial<NormalizedUser> = {}): NormalizedUser {
  return {
    externalId: ext,
    userName: `${ext}@example.com`,
    givenName: 'G',
    familyName: ext,
    emails: [`${ext}@example.com`],
    active: true,
    attributes: {},
    ...extra,
  };
}

function scimUser(id: string, ext: string, extra: Partial<ScimUser> = {}): ScimUser {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    id,
    externalId: ext,
    userName: `${ext}@example.com`,
    name: { givenName: 'G', familyName: ext },
    displayName: `G ${ext}`,
    emails: [{ value: `${ext}@example.com`, type: 'work', primary: true }],
    active: true,
    ...extra,
  };
}

/**
 * The scenario, so expectations can be derived by reading it:
 * - users in the source: a (family name changed → update), b (unchanged), c (deactivated on
 *   the platform → reactivate), e (new → create); one row rejected by the source;
 * - d is managed but gone from the source → 1 deactivation (destructive);
 * - group eng exists (renamed Eng → Engineering; members {p-a, p-d} → {a, b}: +1 −1, d being the leaver);
 * - group ops is new with member e (its membership is not drift).
 * `maxDeletes: 0` makes the single deactivation trip the guard.
 */
export function scenarioPlan(tenant: string, opts: { tripGuard: boolean }): Plan {
  const ledger = new Ledger();
  for (const x of ['a', 'b', 'c', 'd']) ledger.record('user', `p-${x}`, x);
  ledger.record('group', 'g-eng', 'eng');
  return buildPlan({
    tenant,
    source: 'test',
    desired: {
      users: [user('a', { familyName: 'Changed' }), user('b'), user('c'), user('e')],
      groups: [
        { externalId: 'eng', displayName: 'Engineering', members: ['a', 'b'] },
        { externalId: 'ops', displayName: 'Ops', members: ['e'] },
      ],
      // With a readable id (naming no platform account): a row with no identity at all would hold the deactivation.
      rejected: [{ kind: 'row', ref: 'users.csv:7', reason: 'missing userName', externalId: 'r-7' }],
      stats: {},
    },
    platformUsers: [scimUser('p-a', 'a'), scimUser('p-b', 'b'), scimUser('p-c', 'c', { active: false }), scimUser('p-d', 'd')],
    platformGroups: [{ schemas: [], id: 'g-eng', externalId: 'eng', displayName: 'Eng', members: [{ value: 'p-a' }, { value: 'p-d' }] }],
    ledger,
    config: provisioningSchema.parse({
      source: { type: 'file', path: 'x.yaml' },
      guards: opts.tripGuard ? { maxDeletes: 0, maxDeletePercent: 100 } : { maxDeletes: 100, maxDeletePercent: 100 },
    }),
    allowDeletes: false,
    now: Date.parse('2026-11-21T12:00:00Z'),
  });
}
