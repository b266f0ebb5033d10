/**
 * Behaviours of real SCIM servers that a client must survive, as simulator options
 * (`quirks` on startSimulator, `--quirks a,b` on `simulate`). Each one is something a
 * deployed server does; the client's tolerance of each is tested against this simulator.
 * Events rather than behaviours (objects deleted and created between two list pages) are
 * fault rules instead: `mutate-between-pages` with `mutation: 'churn'`.
 */

export const SERVER_QUIRKS = {
  'repeat-first-page':
    'a startIndex past the end of the collection is answered with the first page again instead of an empty page (servers built on the scimmy library)',
  'case-sensitive-eq': 'filter comparisons (eq, ne, sw, co…) are case-exact for every attribute, userName and displayName included',
  'reject-escaped-filter': 'a filter holding an escaped character (\\" or \\\\ in a value) is refused with 400 invalidFilter',
  'created-without-id': 'a successful POST answers 201 with the resource but without its id (and without meta or a Location header)',
  'created-without-body': 'a successful POST answers 201 with an empty body',
  'unique-email-types': 'a user whose e-mails lack a type, or whose e-mails share a type, is refused with 400 invalidValue',
  'case-sensitive-username': 'userName uniqueness (409) is case-exact: Alice@x and alice@x may both exist',
} as const;

export type ServerQuirk = keyof typeof SERVER_QUIRKS;

export function isServerQuirk(name: string): name is ServerQuirk {
  return Object.hasOwn(SERVER_QUIRKS, name);
}

/** The quirks as a set, refusing unknown names (a typo must not silently test nothing). */
export function quirkSet(names: readonly string[] | undefined): ReadonlySet<ServerQuirk> {
  const out = new Set<ServerQuirk>();
  for (const name of names ?? []) {
    if (!isServerQuirk(name)) throw new Error(`unknown simulator quirk "${name}"; known: ${Object.keys(SERVER_QUIRKS).join(', ')}`);
    out.add(name);
  }
  return out;
}

/** A filter value with an escape sequence, as `reject-escaped-filter` servers refuse. */
export function hasEscapedValue(filter: string): boolean {
  return filter.includes('\\');
}
