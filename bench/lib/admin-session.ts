/**
 * The directory administrator's LDAP session a change driver works through: bound once,
 * unbound at the end, and the membership edits both directories share (a `member` value
 * added to or deleted from a group, a group move).
 */
import { Attribute, Change, Client } from 'ldapts';
import type { Effect } from './change-plan.ts';
import { MembershipModel } from './membership-model.ts';

export abstract class AdminSession {
  protected readonly client: Client;
  protected readonly model: MembershipModel;
  private readonly adminDn: string;
  private readonly adminPassword: string;

  constructor(url: string, adminDn: string, adminPassword: string, users: number, groups: number) {
    this.adminDn = adminDn;
    this.adminPassword = adminPassword;
    this.model = new MembershipModel(users, groups);
    this.client = new Client({ url, timeout: 60_000 });
  }

  async connect(): Promise<void> {
    await this.client.bind(this.adminDn, this.adminPassword);
  }

  async close(): Promise<void> {
    await this.client.unbind().catch(() => undefined);
  }

  /** Group `g`'s DN in this directory. */
  protected abstract groupDn(g: number): string;

  /** Group `g`'s externalId as the platform sees it. */
  protected abstract groupExternalId(g: number): string;

  /** A group move: user `i` (entry `dn`) leaves one of its groups and joins another; the membership writes it must cause. */
  protected async moveGroup(i: number, dn: string, user: string): Promise<Effect[]> {
    const effects: Effect[] = [];
    const groups = this.model.groupsOf(i);
    const from = this.model.moveFrom(i);
    const to = this.model.otherGroup(groups);
    if (from !== undefined) {
      await this.members(from, 'delete', dn);
      groups.delete(from);
      effects.push({ type: 'member-remove', group: this.groupExternalId(from), user });
    }
    await this.members(to, 'add', dn);
    groups.add(to);
    effects.push({ type: 'member-add', group: this.groupExternalId(to), user });
    return effects;
  }

  protected members(g: number, operation: 'add' | 'delete', dn: string): Promise<void> {
    return this.client.modify(this.groupDn(g), [new Change({ operation, modification: new Attribute({ type: 'member', values: [dn] }) })]);
  }
}
