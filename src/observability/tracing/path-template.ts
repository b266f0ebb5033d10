/**
 * The path of a request as a template for a span (`/scim/v2/Users/{id}`): the query is dropped
 * (a filter may hold a userName) and every segment that is not a plain word is replaced by
 * `{id}`, as is any segment naming an object under a SCIM collection. What remains are the
 * API's own words, the same for every object.
 */
const WORD = /^(?:v\d{1,3}|[A-Za-z_][A-Za-z_-]{0,39})$/;
const COLLECTIONS = new Set(['Users', 'Groups', 'user-attributes', 'Schemas', 'ResourceTypes']);

export function pathTemplate(path: string): string {
  const bare = path.split('?')[0] ?? '';
  const segments = bare.split('/');
  const out: string[] = [];
  for (const [i, seg] of segments.entries()) {
    if (seg === '') {
      out.push(seg);
      continue;
    }
    const after = segments[i - 1];
    out.push(WORD.test(seg) && !(after !== undefined && COLLECTIONS.has(after)) ? seg : '{id}');
  }
  return out.join('/') || '/';
}
