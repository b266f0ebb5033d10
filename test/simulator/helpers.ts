/** Small HTTP helpers for the simulator tests: real sockets, plain fetch. */
import { SCHEMA_GROUP, SCHEMA_PATCH, SCHEMA_USER } from '../../src/platform/scim/types.ts';

export const TOKEN = 'test-token';

export interface Reply {
  status: number;
  headers: Headers;
  /** Parsed JSON; loosely typed on purpose (test-only), every use is checked by an expect(). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export async function scim(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const res = await fetch(`${base}/api/scim/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/scim+json', ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

export function newUser(userName: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { schemas: [SCHEMA_USER], userName, active: true, ...extra };
}

export function newGroup(displayName: string, members: string[] = [], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { schemas: [SCHEMA_GROUP], displayName, members: members.map((value) => ({ value })), ...extra };
}

export function patchOp(...operations: Array<Record<string, unknown>>): Record<string, unknown> {
  return { schemas: [SCHEMA_PATCH], Operations: operations };
}

export function q(filter: string): string {
  return `filter=${encodeURIComponent(filter)}`;
}
