/**
 * A whole search, read page by page with the RFC 2696 paged-results control, so a directory
 * larger than the server's size limit (AD: 1,000) is read completely. A size-limit result is
 * an error, never a short list.
 */
import type { Client, Entry } from 'ldapts';
import { ldapError } from './classify.ts';
import { errorContext } from './connect.ts';
import type { LdapSettings } from './settings.ts';

export interface SearchRequestSpec {
  baseDn: string;
  filter: string;
  scope: 'sub' | 'one' | 'base';
  attributes: string[];
  /** Label for error messages, e.g. `users under ou=people,dc=example,dc=org`. */
  what: string;
}

export interface PagedResult {
  entries: Entry[];
  pages: number;
  /** Search continuation references (other naming contexts): not followed. */
  references: number;
  /** Their URIs (reported as rejections: what lies under them was not read). */
  referenceUris: string[];
}

export async function pagedSearch(client: Client, s: LdapSettings, req: SearchRequestSpec, signal?: AbortSignal): Promise<PagedResult> {
  const entries: Entry[] = [];
  let pages = 0;
  let references = 0;
  const referenceUris: string[] = [];
  try {
    const pagesIter = client.searchPaginated(req.baseDn, {
      scope: req.scope,
      filter: req.filter,
      attributes: req.attributes,
      // ldapts matches these names case-sensitively against the server's spelling.
      explicitBufferAttributes: s.binaryAttributes.flatMap((a) => [a, a.toLowerCase()]),
      paged: { pageSize: s.pageSize },
      timeLimit: Math.ceil(s.timeoutSeconds),
    });
    for await (const page of pagesIter) {
      signal?.throwIfAborted();
      pages++;
      for (const e of page.searchEntries) entries.push(e);
      references += page.searchReferences.length;
      for (const uri of page.searchReferences) referenceUris.push(String(uri));
    }
  } catch (e) {
    signal?.throwIfAborted();
    throw ldapError(e, 'search', errorContext(s, req.what));
  }
  return { entries, pages, references, referenceUris };
}

/** One entry read by DN (range retrieval, connectivity probe); undefined when it does not exist. */
export async function readEntry(
  client: Client,
  s: LdapSettings,
  dn: string,
  attributes: string[],
  what: string,
): Promise<Entry | undefined> {
  try {
    const res = await client.search(dn, { scope: 'base', filter: '(objectClass=*)', attributes, timeLimit: Math.ceil(s.timeoutSeconds) });
    return res.searchEntries[0];
  } catch (e) {
    if ((e as { code?: unknown }).code === 32) return undefined;
    throw ldapError(e, 'search', errorContext(s, what));
  }
}
