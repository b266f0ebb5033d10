/**
 * Actions on the status page (approve held deletions, resume, trigger) and why they are
 * CSRF-safe. An action is a POST whose form carries the action token (the content of
 * daemon.ui.actionTokenFile) typed by the operator: no cookie or other ambient credential
 * exists, so a page on another site cannot make a browser send a valid action — it would
 * have to know the token. On top of that the request must come from this origin (Origin,
 * else Sec-Fetch-Site, when the browser sends them), be a small urlencoded form, and the
 * token is compared in constant time. The token is never echoed into a page or a log line.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ActionName } from './view.ts';

export const ACTIONS: readonly ActionName[] = ['approve-deletes', 'resume', 'trigger'];
export const MIN_TOKEN_LENGTH = 16;
const MAX_BODY_BYTES = 8 * 1024;

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** A constant-time matcher for the configured token (hashing first makes the lengths equal). */
export function tokenMatcher(token: string): (candidate: string) => boolean {
  const want = digest(token);
  return (candidate) => candidate.length > 0 && timingSafeEqual(want, digest(candidate));
}

export type Refusal = { status: number; reason: string };

/** Same-origin check for a state-changing request: Origin must name this host; else Sec-Fetch-Site must not be cross-site. */
export function originRefusal(req: IncomingMessage): Refusal | undefined {
  const host = req.headers.host;
  const origin = req.headers.origin;
  if (origin !== undefined) {
    if (host === undefined || (origin !== `http://${host}` && origin !== `https://${host}`))
      return { status: 403, reason: 'the request did not come from this page (Origin does not match)' };
    return undefined;
  }
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    return { status: 403, reason: 'the request did not come from this page (cross-site)' };
  return undefined;
}

/** The urlencoded form of a POST, bounded in size. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams | Refusal> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return { status: 415, reason: 'expected a form (application/x-www-form-urlencoded)' };
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY_BYTES) return { status: 413, reason: 'form too large' };
    chunks.push(c);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export const isAction = (s: string): s is ActionName => (ACTIONS as readonly string[]).includes(s);
