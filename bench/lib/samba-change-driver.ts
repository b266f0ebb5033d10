/**
 * Carries out planned directory changes (bench/lib/change-plan.ts) on the benchmark's Samba AD
 * directory (bench/lib/samba-directory.ts) through real LDAP operations as the domain
 * administrator, and says which platform writes each must cause:
 *
 * - joiner: a new enabled user, then added to one group;
 * - leaver disabled: the ACCOUNTDISABLE bit of userAccountControl;
 * - leaver deleted: the object deleted. AD drops its group links itself and keeps a tombstone,
 *   which a change reader sees through the Show Deleted control: its deprovisioning is a
 *   change-path effect here;
 * - rename: a new CN (modrdn), sAMAccountName and userPrincipalName (the login name); AD
 *   rewrites the groups' member links itself;
 * - attribute change: new surname, mail and department;
 * - group move: removed from one of its groups, added to another.
 */
import { Attribute, Change } from 'ldapts';
import { decodeObjectGuid } from '../../src/sources/ldap/guid.ts';
import type { ChangeDriver, DoneChange, Effect, PlannedChange } from './change-plan.ts';
import { AdminSession } from './admin-session.ts';
import { UAC_DISABLED, sambaUser, type SambaDirectory } from './samba-directory.ts';

const replace = (type: string, value: string): Change =>
  new Change({ operation: 'replace', modification: new Attribute({ type, values: [value] }) });

export class SambaChangeDriver extends AdminSession implements ChangeDriver {
  private readonly dir: SambaDirectory;

  constructor(url: string, adminDn: string, adminPassword: string, dir: SambaDirectory) {
    super(url, adminDn, adminPassword, dir.userGuid.length, dir.groupGuid.length);
    this.dir = dir;
  }

  protected groupDn(g: number): string {
    return this.dir.groupDn(g);
  }

  protected groupExternalId(g: number): string {
    return this.groupGuid(g);
  }

  private groupGuid(g: number): string {
    return this.dir.groupGuid[g] as string;
  }

  async apply(p: PlannedChange): Promise<DoneChange> {
    const startedAt = Date.now();
    const i = p.index;
    const dn = this.dir.userDn(`user${i}`);
    const effects: Effect[] = [];
    let user = this.dir.userGuid[i] as string;
    switch (p.kind) {
      case 'joiner': {
        const name = `joiner${i}`;
        const jdn = this.dir.userDn(name);
        await this.client.add(jdn, { ...sambaUser(name, i, this.dir.realm), givenName: 'Joiner', displayName: `Joiner ${i}` });
        const g = this.model.otherGroup();
        await this.members(g, 'add', jdn);
        const at = Date.now();
        const { searchEntries } = await this.client.search(jdn, {
          scope: 'base',
          attributes: ['objectGUID'],
          explicitBufferAttributes: ['objectGUID'],
        });
        user = decodeObjectGuid(searchEntries[0]?.['objectGUID'] as Buffer);
        effects.push({ type: 'create', user }, { type: 'member-add', group: this.groupGuid(g), user });
        return { ...p, user, startedAt, at, effects, blindEffects: [] };
      }
      case 'leaver-disabled':
        await this.client.modify(dn, [replace('userAccountControl', String(UAC_DISABLED))]);
        effects.push({ type: 'deprovision', user });
        break;
      case 'leaver-deleted':
        await this.client.del(dn);
        this.model.groupsOf(i).clear();
        effects.push({ type: 'deprovision', user });
        break;
      case 'rename':
        await this.client.modify(dn, [
          replace('sAMAccountName', `renamed${i}`),
          replace('userPrincipalName', `renamed${i}@${this.dir.realm}`),
        ]);
        await this.client.modifyDN(dn, `CN=renamed${i}`);
        effects.push({ type: 'user-write', user });
        break;
      case 'attribute':
        await this.client.modify(dn, [
          replace('sn', `M${i}`),
          replace('mail', `user${i}@new.${this.dir.realm}`),
          replace('department', `d${(i + 1) % 50}`),
        ]);
        effects.push({ type: 'user-write', user });
        break;
      case 'group-move':
        effects.push(...(await this.moveGroup(i, dn, user)));
        break;
    }
    return { ...p, user, startedAt, at: Date.now(), effects, blindEffects: [] };
  }
}
