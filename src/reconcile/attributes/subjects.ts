/**
 * Whose attributes a run syncs: exactly the accounts the user plan provisions for an active,
 * in-scope source user — users it creates, users it updates, adopts or reactivates, and
 * managed users it leaves unchanged (their platform `externalId` is the source user's, and the
 * ledger records them as that person's). Users being deactivated or deleted, skipped or
 * unmanaged accounts, and everyone else on the platform are never touched.
 */
import type { ProvisioningConfig } from '../../config/schema.ts';
import type { DesiredState, NormalizedUser } from '../../identity/model.ts';
import { compileScope } from '../../identity/scope.ts';
import type { ScimUser } from '../../platform/scim/types.ts';
import type { Ledger } from '../ledger.ts';
import type { Plan } from '../plan-types.ts';

export interface AttributeSubject {
  user: NormalizedUser;
  /** Platform id; undefined when this run creates the user. */
  id: string | undefined;
  /** The user plan adopts this account in this run: write only once the ledger records it. */
  adopt: boolean;
  /** The account is handed over from a leaver in this run: nothing it held carries over (whenMissing: keep does not apply). */
  handover?: boolean;
}

export function attributeSubjects(
  plan: Plan,
  desired: DesiredState,
  platformUsers: ScimUser[],
  ledger: Ledger,
  config: ProvisioningConfig,
): AttributeSubject[] {
  const scope = compileScope<NormalizedUser>(config.scope.users, 'provisioning.scope.users');
  const byExt = new Map<string, NormalizedUser>();
  for (const u of desired.users) if (u.active && !byExt.has(u.externalId) && scope(u)) byExt.set(u.externalId, u);
  const removed = new Set([...plan.users.deactivate, ...plan.users.delete].map((r) => r.id));
  const skipped = new Set(plan.skipped.filter((s) => s.kind === 'user').map((s) => s.ref.toLowerCase()));
  const out = new Map<string, AttributeSubject>();
  const claimed = new Set<string>();

  for (const c of plan.users.create) {
    const user = byExt.get(c.externalId);
    if (user) out.set(c.externalId, { user, id: undefined, adopt: false });
  }
  for (const u of [...plan.users.update, ...plan.users.reactivate]) {
    claimed.add(u.id);
    const user = byExt.get(u.externalId);
    if (!user || removed.has(u.id) || out.has(u.externalId)) continue;
    out.set(u.externalId, { user, id: u.id, adopt: u.adopt, ...(u.handoverFrom !== undefined ? { handover: true } : {}) });
  }
  for (const p of platformUsers) {
    const ext = p.externalId;
    if (ext === undefined || ext === '' || claimed.has(p.id) || removed.has(p.id) || out.has(ext)) continue;
    const user = byExt.get(ext);
    if (!user || skipped.has(user.userName.toLowerCase()) || p.active === false) continue;
    const managed = config.ownership.mode === 'externalId' || ledger.get('user', p.id)?.externalId === ext;
    if (!managed) continue;
    claimed.add(p.id);
    out.set(ext, { user, id: p.id, adopt: false });
  }
  return [...out.values()];
}
