/**
 * The platform simulator's request log as a JSON-lines file, for benchmarks that measure when
 * the platform acknowledged a write: one line per SCIM request, written when the response was
 * sent, with the objects it concerns resolved to their externalIds (the source's ids), so a
 * benchmark can match a directory change to the platform writes it caused without asking the
 * simulator anything. Read-only towards the simulator: it only looks objects up in its store.
 *
 * Lines are summaries, not bodies (an initial sync writes 100,000+ of them):
 *   { t, method, res, status, filter?, user?, group?, active?, add?, remove?, members? }
 */
import { appendFileSync, closeSync, openSync, readSync } from 'node:fs';
import type { RequestLogEntry, SimStore } from '../../src/simulator/index.ts';

export interface LoggedRequest {
  /** Epoch ms when the response was sent (the platform's acknowledgement). */
  t: number;
  method: string;
  /** 'Users' | 'Groups' | another SCIM path segment ('ServiceProviderConfig', …) | 'other'. */
  res: string;
  /** True for /Users/<id> or /Groups/<id>, false for the collection. */
  item: boolean;
  status: number;
  filter?: string;
  /** startIndex of a GET on a collection (a page of a listing). */
  start?: number;
  /** externalId of the user the request names (its path, or the body of a POST /Users). */
  user?: string;
  /** externalId of the group the request names. */
  group?: string;
  /** `active` when the request body sets it. */
  active?: boolean;
  /** Group PATCH: externalIds of the members added / removed. */
  add?: string[];
  remove?: string[];
  /** Group PUT (or POST): the complete member list sent, as externalIds. */
  members?: string[];
}

const SCIM_PATH = /^(?:\/api)?\/scim\/v2\/([^/]+)(?:\/([^/]+))?\/?$/;
const VALUE_EQ = /value\s+eq\s+"([^"]+)"/g;

function memberIds(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value && typeof value === 'object' ? [value] : [];
  const out: string[] = [];
  for (const m of list) {
    const v = (m as { value?: unknown }).value;
    if (typeof v === 'string') out.push(v);
    const inner = (m as { members?: unknown }).members;
    if (inner !== undefined) out.push(...memberIds(inner));
  }
  return out;
}

/** Keeps platform id → externalId for users, so a DELETE (after which the store forgets) still resolves. */
export class RequestLogWriter {
  private readonly userExt = new Map<string, string>();
  private buffer: string[] = [];
  private readonly timer: NodeJS.Timeout;

  private readonly path: string;
  private readonly store: SimStore;

  constructor(path: string, store: SimStore) {
    this.path = path;
    this.store = store;
    appendFileSync(path, '');
    // Flushed in batches: an initial sync sends thousands of requests a second.
    this.timer = setInterval(() => this.flush(), 100);
    this.timer.unref();
  }

  private userExtOf(id: string): string | undefined {
    const ext = this.store.getUser(id)?.externalId ?? this.userExt.get(id);
    if (ext !== undefined) this.userExt.set(id, ext);
    return ext;
  }

  record(entry: RequestLogEntry): void {
    const m = SCIM_PATH.exec(entry.path);
    const res = m ? (m[1] as string) : 'other';
    const id = m?.[2];
    const line: LoggedRequest = { t: Date.now(), method: entry.method, res, item: id !== undefined, status: entry.status };
    const filter = entry.query['filter'];
    if (filter !== undefined) line.filter = filter;
    const start = entry.query['startIndex'];
    if (entry.method === 'GET' && id === undefined && start !== undefined) line.start = Number(start);
    const body = (entry.body ?? {}) as Record<string, unknown>;
    if (res === 'Users') {
      if (id !== undefined) line.user = this.userExtOf(id);
      else if (entry.method === 'POST' && typeof body['userName'] === 'string') {
        const created = this.store.getUserByUserName(body['userName']);
        if (created?.externalId !== undefined) {
          this.userExt.set(created.id, created.externalId);
          line.user = created.externalId;
        } else if (typeof body['externalId'] === 'string') line.user = body['externalId'];
      }
      if (typeof body['active'] === 'boolean') line.active = body['active'];
      for (const op of (body['Operations'] as { path?: string; value?: unknown }[] | undefined) ?? []) {
        if (op.path === 'active' && typeof op.value === 'boolean') line.active = op.value;
        const v = op.value as Record<string, unknown> | undefined;
        if (op.path === undefined && typeof v?.['active'] === 'boolean') line.active = v['active'] as boolean;
      }
    } else if (res === 'Groups') {
      if (id !== undefined) line.group = this.store.getGroup(id)?.externalId;
      else if (typeof body['externalId'] === 'string') line.group = body['externalId'];
      const ext = (ids: string[]): string[] => ids.map((u) => this.userExtOf(u) ?? `id:${u}`);
      if (entry.method === 'PATCH') {
        const add: string[] = [];
        const remove: string[] = [];
        for (const op of (body['Operations'] as { op?: string; path?: string; value?: unknown }[] | undefined) ?? []) {
          const kind = (op.op ?? '').toLowerCase();
          const path = op.path ?? '';
          if (!path.startsWith('members') && !(path === '' && op.value && typeof op.value === 'object')) continue;
          const ids = memberIds(op.value);
          for (const f of path.matchAll(VALUE_EQ)) ids.push(f[1] as string);
          if (kind === 'add') add.push(...ids);
          else if (kind === 'remove') remove.push(...ids);
          else if (kind === 'replace') line.members = ext(ids);
        }
        if (add.length > 0) line.add = ext(add);
        if (remove.length > 0) line.remove = ext(remove);
      } else if ((entry.method === 'PUT' || entry.method === 'POST') && body['members'] !== undefined) {
        line.members = ext(memberIds(body['members']));
      }
    }
    this.buffer.push(JSON.stringify(line));
    if (this.buffer.length >= 5000) this.flush();
  }

  flush(): void {
    if (this.buffer.length === 0) return;
    appendFileSync(this.path, `${this.buffer.join('\n')}\n`);
    this.buffer = [];
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
  }
}

/** Reads the log as it grows: each call returns the complete lines appended since the last. */
export class RequestLogTail {
  private offset = 0;
  private rest = '';

  private readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  /** Skip what is already there (e.g. the initial sync's requests). */
  skipToEnd(): void {
    this.read();
  }

  read(): LoggedRequest[] {
    const fd = openSync(this.path, 'r');
    const out: LoggedRequest[] = [];
    try {
      const chunk = Buffer.alloc(1 << 20);
      for (;;) {
        const n = readSync(fd, chunk, 0, chunk.length, this.offset);
        if (n <= 0) break;
        this.offset += n;
        const text = this.rest + chunk.subarray(0, n).toString('utf8');
        const lines = text.split('\n');
        this.rest = lines.pop() ?? '';
        for (const l of lines) if (l !== '') out.push(JSON.parse(l) as LoggedRequest);
      }
    } finally {
      closeSync(fd);
    }
    return out;
  }
}

/** A page of a listing of every user (or group): GET on the collection without a filter. */
export function isListingPage(r: LoggedRequest, res: 'Users' | 'Groups'): boolean {
  return r.method === 'GET' && r.res === res && !r.item && r.filter === undefined;
}

/** The first page of a listing of every user (or group): one per full listing. */
export function isFullListing(r: LoggedRequest, res: 'Users' | 'Groups'): boolean {
  return isListingPage(r, res) && (r.start === undefined || r.start <= 1);
}

/** A group membership write (PATCH or PUT of a group). */
export function isMembershipWrite(r: LoggedRequest): boolean {
  return r.res === 'Groups' && r.item && (r.method === 'PATCH' || r.method === 'PUT');
}
