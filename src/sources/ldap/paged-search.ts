/**
 * A whole search, read page by page with the RFC 2696 paged-results control, so a directory
 * larger than the server's size limit (AD: 1,000) is read completely. A size-limit result is
 * an error, never a short list.
 */
import type { Client, Control, Entry, SearchResult } from 'ldapts';
import { isSyncError } from '../../errors.ts';
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
  /** Request controls besides paging (e.g. Active Directory's Show Deleted). */
  controls?: Control[];
}

export interface PagedResult {
  pages: number;
  entries: number;
  /** Search continuation references (other naming contexts): not followed. */
  references: number;
  /** Their URIs (reported as rejections: what lies under them was not read). */
  referenceUris: string[];
}

/**
 * Each page is handed to `onPage` as it arrives and not kept, so memory holds one page of raw
 * entries, not the whole search. The next page is requested before `onPage` runs, so the
 * server prepares it while this process maps the current one.
 */
export async function pagedSearch(
  client: Client,
  s: LdapSettings,
  req: SearchRequestSpec,
  onPage: (entries: Entry[], page: number) => void,
  signal?: AbortSignal,
): Promise<PagedResult> {
  let pages = 0;
  let entries = 0;
  let references = 0;
  const referenceUris: string[] = [];
  try {
    const pagesIter: AsyncGenerator<SearchResult> = client.searchPaginated(
      req.baseDn,
      {
        scope: req.scope,
        filter: req.filter,
        attributes: req.attributes,
        // ldapts matches these names case-sensitively against the server's spelling.
        explicitBufferAttributes: s.binaryAttributes.flatMap((a) => [a, a.toLowerCase()]),
        paged: { pageSize: s.pageSize },
        timeLimit: Math.ceil(s.timeoutSeconds),
      },
      req.controls,
    );
    let next = pagesIter.next();
    for (;;) {
      const r = await next;
      if (r.done) break;
      signal?.throwIfAborted();
      const page = r.value;
      next = pagesIter.next();
      // Settled by the next await; if onPage throws first, its failure is not unhandled.
      next.catch(() => undefined);
      pages++;
      entries += page.searchEntries.length;
      references += page.searchReferences.length;
      for (const uri of page.searchReferences) referenceUris.push(String(uri));
      onPage(page.searchEntries, pages);
    }
  } catch (e) {
    signal?.throwIfAborted();
    if (isSyncError(e)) throw e;
    throw ldapError(e, 'search', errorContext(s, req.what));
  }
  return { pages, entries, references, referenceUris };
}

/** One entry read by DN (range retrieval, connectivity probe); undefined when it does not exist. */
export async function readEntry(
  client: Client,
  s: LdapSettings,
  dn: string,
  attributes: string[],
  what: string,
  /** Of `attributes`, those to return as raw bytes. */
  binary: string[] = [],
): Promise<Entry | undefined> {
  return readEntryMatching(client, s, dn, '(objectClass=*)', attributes, what, binary);
}

/** The entry at `dn` if it matches `filter`; undefined when it does not, or does not exist. */
export async function readEntryMatching(
  client: Client,
  s: LdapSettings,
  dn: string,
  filter: string,
  attributes: string[],
  what: string,
  binary: string[] = [],
): Promise<Entry | undefined> {
  try {
    const res = await client.search(dn, {
      scope: 'base',
      filter,
      attributes,
      timeLimit: Math.ceil(s.timeoutSeconds),
      ...(binary.length > 0 ? { explicitBufferAttributes: binary.flatMap((a) => [a, a.toLowerCase()]) } : {}),
    });
    return res.searchEntries[0];
  } catch (e) {
    if ((e as { code?: unknown }).code === 32) return undefined;
    throw ldapError(e, 'search', errorContext(s, what));
  }
}
