/**
 * What this tool assumes of the audit-log export, in one place. The platform documents only
 * "CSV file streamed as an attachment" (docs/audit.md#what-the-export-must-be lists what is
 * assumed and why); everything else here is an assumption, and each one is checked on every
 * response before a byte of it counts:
 *
 * - the answer is `200`; a redirect is never followed (the bearer token must not travel to
 *   another host), a `204` or any other status is not an export;
 * - its content type, when there is one, is a CSV-like type (below): an HTML page (a proxy's
 *   login page) or a JSON body (the platform's `{ "error": … }` envelope) is not an export;
 * - its body starts with a header row (at least the column names, even for an empty window),
 *   so an empty body is not an empty window;
 * - its body ends where the transfer framing says it does (chunked terminator, full
 *   Content-Length) and its last record is complete.
 */

/** Media types accepted as CSV. An absent content type is accepted: the body is checked instead. */
export const CSV_MEDIA_TYPES: ReadonlySet<string> = new Set([
  'text/csv',
  'application/csv',
  'text/comma-separated-values',
  'text/plain',
  'application/octet-stream',
  'application/vnd.ms-excel',
]);

/** The media type of a Content-Type header value, lower case, without parameters; '' when absent. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

export function isCsvMediaType(contentType: string | undefined): boolean {
  const t = mediaType(contentType);
  return t === '' || CSV_MEDIA_TYPES.has(t);
}

/**
 * What the first significant byte of a body says it is, whatever its content type: a CSV
 * header never starts with `<` (HTML, XML) nor with `{` or `[` (JSON). `undefined` while the
 * bytes so far are only a byte order mark and white space.
 */
export function sniffBody(chunk: Buffer, atStart: boolean): 'csv' | 'html' | 'json' | undefined {
  let i = 0;
  if (atStart && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
  while (i < chunk.length && (chunk[i] === 0x20 || chunk[i] === 0x09 || chunk[i] === 0x0a || chunk[i] === 0x0d)) i++;
  if (i >= chunk.length) return undefined;
  const c = chunk[i];
  if (c === 0x3c) return 'html'; // <
  if (c === 0x7b || c === 0x5b) return 'json'; // { [
  return 'csv';
}
