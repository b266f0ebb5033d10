/**
 * Carries out planned directory changes (bench/lib/change-plan.ts) on the benchmark's slapd
 * directory (bench/lib/ldap-directory.ts) through real LDAP add / modify / modrdn / delete as
 * the directory administrator, and says which platform writes each must cause.
 *
 * - joiner: a new inetOrgPerson, then added to one group;
 * - leaver disabled: `employeeType: terminated` (the source's `disabled` rule);
 * - leaver deleted: removed from its groups, then the entry deleted (what the refint overlay
 *   does on a production OpenLDAP). OpenLDAP keeps no trace of a deleted entry, so a change
 *   reader cannot see the deletion itself: the user's deprovisioning is a blind effect, left
 *   to the next full reconcile; the membership removals are visible (the groups changed);
 * - rename: modrdn to a new uid (the login name), and its groups' member values rewritten to
 *   the new DN (refint again);
 * - attribute change: new surname, mail and department;
 * - group move: removed from one of its groups, added to another.
 */
import { Attribute, Change } from 'ldapts';
import type { ChangeDriver, DoneChange, Effect, PlannedChange } from './change-plan.ts';
import { GROUPS, PEOPLE, groupId, userId } from './ldap-directory.ts';
import { AdminSession } from './admin-session.ts';

export class LdapChangeDriver extends AdminSession implements ChangeDriver {
  protected groupDn(g: number): string {
    return `cn=group${g},${GROUPS}`;
  }

  protected groupExternalId(g: number): string {
    return groupId(g);
  }

  private async entryUuid(dn: string): Promise<string> {
    const { searchEntries } = await this.client.search(dn, { scope: 'base', attributes: ['entryUUID'] });
    const id = searchEntries[0]?.['entryUUID'];
    if (typeof id !== 'string') throw new Error(`no entryUUID for ${dn}`);
    return id;
  }

  async apply(p: PlannedChange): Promise<DoneChange> {
    const startedAt = Date.now();
    const i = p.index;
    const dn = `uid=user${i},${PEOPLE}`;
    const effects: Effect[] = [];
    const blindEffects: Effect[] = [];
    let user = userId(i);
    switch (p.kind) {
      case 'joiner': {
        const uid = `joiner${i}`;
        const jdn = `uid=${uid},${PEOPLE}`;
        await this.client.add(jdn, {
          objectClass: 'inetOrgPerson',
          uid,
          cn: `Joiner ${i}`,
          givenName: 'Joiner',
          sn: `J${i}`,
          mail: `${uid}@example.org`,
          departmentNumber: `d${i % 50}`,
        });
        const g = this.model.otherGroup();
        await this.members(g, 'add', jdn);
        const at = Date.now();
        user = await this.entryUuid(jdn);
        effects.push({ type: 'create', user }, { type: 'member-add', group: groupId(g), user });
        return { ...p, user, startedAt, at, effects, blindEffects };
      }
      case 'leaver-disabled':
        await this.client.modify(dn, [
          new Change({ operation: 'replace', modification: new Attribute({ type: 'employeeType', values: ['terminated'] }) }),
        ]);
        effects.push({ type: 'deprovision', user });
        break;
      case 'leaver-deleted': {
        const groups = this.model.groupsOf(i);
        for (const g of groups) {
          await this.members(g, 'delete', dn);
          effects.push({ type: 'member-remove', group: groupId(g), user });
        }
        groups.clear();
        await this.client.del(dn);
        blindEffects.push({ type: 'deprovision', user });
        break;
      }
      case 'rename': {
        const ndn = `uid=renamed${i},${PEOPLE}`;
        await this.client.modifyDN(dn, `uid=renamed${i}`);
        for (const g of this.model.groupsOf(i))
          await this.client.modify(`cn=group${g},${GROUPS}`, [
            new Change({ operation: 'delete', modification: new Attribute({ type: 'member', values: [dn] }) }),
            new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: [ndn] }) }),
          ]);
        effects.push({ type: 'user-write', user });
        break;
      }
      case 'attribute':
        await this.client.modify(dn, [
          new Change({ operation: 'replace', modification: new Attribute({ type: 'sn', values: [`M${i}`] }) }),
          new Change({ operation: 'replace', modification: new Attribute({ type: 'mail', values: [`user${i}@new.example.org`] }) }),
          new Change({ operation: 'replace', modification: new Attribute({ type: 'departmentNumber', values: [`d${(i + 1) % 50}`] }) }),
        ]);
        effects.push({ type: 'user-write', user });
        break;
      case 'group-move':
        effects.push(...(await this.moveGroup(i, dn, user)));
        break;
    }
    return { ...p, user, startedAt, at: Date.now(), effects, blindEffects };
  }
}
