/**
 * The directory administrator's LDAP session a change driver works through: bound once,
 * unbound at the end, and the one membership edit both directories share (a `member` value
 * added to or deleted from a group).
 */
import { Attribute, Change, Client } from 'ldapts';
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

  protected members(g: number, operation: 'add' | 'delete', dn: string): Promise<void> {
    return this.client.modify(this.groupDn(g), [new Change({ operation, modification: new Attribute({ type: 'member', values: [dn] }) })]);
  }
}
