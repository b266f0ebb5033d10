/**
 * The simulated Admin console audit log, as the Reports API `activities.list` with
 * `applicationName=admin` returns it: one activity per administrator action, with its
 * time, a unique qualifier, the actor and one event (`USER_SETTINGS` or `GROUP_SETTINGS`)
 * with Google's event names and parameters. Google makes admin events visible some time
 * after they happen ("data lag"): an activity keeps the time of the change but is listed
 * only `lagMs` later.
 */
import { createHash } from 'node:crypto';

export interface ActivityParameter {
  name: string;
  value: string;
}

export interface AdminActivity {
  kind: 'admin#reports#activity';
  id: { time: string; uniqueQualifier: string; applicationName: 'admin'; customerId: string };
  etag: string;
  actor: { callerType: 'USER'; email: string; profileId: string };
  ipAddress: string;
  events: Array<{ type: 'USER_SETTINGS' | 'GROUP_SETTINGS'; name: string; parameters: ActivityParameter[] }>;
}

export class AdminActivityLog {
  /** How long after it happened an activity becomes visible, in ms (default 0). */
  lagMs = 0;
  /** The administrator recorded as the actor. */
  actorEmail: string;
  private readonly customerId: string;
  private readonly entries: Array<{ visibleAt: number; at: number; seq: number; activity: AdminActivity }> = [];
  private seq = 0;

  constructor(customerId: string, actorEmail: string) {
    this.customerId = customerId;
    this.actorEmail = actorEmail;
  }

  record(type: 'USER_SETTINGS' | 'GROUP_SETTINGS', name: string, params: Record<string, string>, at = Date.now()): AdminActivity {
    this.seq++;
    // Google's uniqueQualifier: a signed 64-bit number as text.
    const uniqueQualifier = `-${BigInt(`0x${createHash('sha1').update(`${this.seq}:${at}`).digest('hex').slice(0, 15)}`)}`;
    const time = new Date(at).toISOString();
    const activity: AdminActivity = {
      kind: 'admin#reports#activity',
      id: { time, uniqueQualifier, applicationName: 'admin', customerId: this.customerId },
      etag: `"${createHash('sha1').update(`${time}/${uniqueQualifier}`).digest('base64url').slice(0, 27)}"`,
      actor: { callerType: 'USER', email: this.actorEmail, profileId: '100000000000000000001' },
      ipAddress: '192.0.2.10',
      events: [{ type, name, parameters: Object.entries(params).map(([k, v]) => ({ name: k, value: v })) }],
    };
    this.entries.push({ visibleAt: at + this.lagMs, at, seq: this.seq, activity });
    return activity;
  }

  /** Visible activities in [startMs, endMs), newest first (the Reports API's order). */
  visible(now: number, startMs = 0, endMs = Number.POSITIVE_INFINITY): AdminActivity[] {
    return this.entries
      .filter((e) => e.visibleAt <= now && e.at >= startMs && e.at < endMs)
      .sort((a, b) => b.at - a.at || b.seq - a.seq)
      .map((e) => e.activity);
  }

  /** Every activity recorded, visible or not (tests). */
  all(): AdminActivity[] {
    return this.entries.map((e) => e.activity);
  }
}
