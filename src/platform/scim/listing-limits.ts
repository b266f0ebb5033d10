/**
 * The `listing` settings of a SCIM connection (the platform's and a SCIM source's): bounds on
 * one paged listing that hold whatever the server claims (docs/reconcile.md#listing-bounds).
 * Defaults live here and in DEFAULT_PAGING_LIMITS, nowhere else.
 */
import { z } from 'zod';
import { DEFAULT_PAGING_LIMITS, type PagingLimits } from './paging.ts';

export const listingLimitsSchema = z
  .strictObject({
    /** Objects one listing may hold; a larger totalResults claim fails the listing at once. */
    maxObjects: z.number().int().min(1).default(DEFAULT_PAGING_LIMITS.maxObjects),
    /** Page requests in one pass of a listing. */
    maxPages: z.number().int().min(1).default(DEFAULT_PAGING_LIMITS.maxPages),
    /** The whole listing, every page and every verification pass. */
    deadlineSeconds: z
      .number()
      .positive()
      .default(DEFAULT_PAGING_LIMITS.deadlineMs / 1000),
  })
  .prefault({});

export type ListingLimits = z.infer<typeof listingLimitsSchema>;

export function pagingLimitsFrom(l: ListingLimits): Partial<PagingLimits> {
  return { maxObjects: l.maxObjects, maxPages: l.maxPages, deadlineMs: l.deadlineSeconds * 1000 };
}
