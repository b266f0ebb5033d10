/** The SCIM 2.0 client and its helpers, as one import for the rest of the code base. */
export * from './types.ts';
export { ScimClient, type ScimClientOptions, type ListOptions, type CreateResult } from './client.ts';
export { eqFilter, andFilter, orFilter, valuePath, compare, filterLiteral, parseFilter, type Filter, type FilterValue } from './filter.ts';
export { applyPatch } from './patch-apply.ts';
export { memberPatchRequests, applyMemberDelta, type MemberRemoveDialect } from './members.ts';
export { listAllPages, DEFAULT_PAGING_LIMITS, type PagingLimits, type Page, type FetchPage } from './paging.ts';
