/** The attribute part of the deletion guard: its own limits, merged into the one verdict that holds destructive work. */
import { describe, expect, it } from 'vitest';
import { mergeAttributeGuard } from '../../../src/reconcile/attributes/guard.ts';
import { evaluateGuard } from '../../../src/reconcile/guard.ts';

const LIMITS = { maxDeletes: 50, maxDeletePercent: 20, maxMemberRemovals: 500, maxMemberRemovalPercent: 50 };
const quiet = () =>
  evaluateGuard({
    destructive: 0,
    managed: 100,
    memberRemovals: 0,
    members: 0,
    sourceEmpty: false,
    sourceRejectedUsers: 0,
    sourceMembersEmpty: false,
    unidentified: [],
    limits: LIMITS,
    allowDeletes: false,
  });
const limits = { maxAttributeClears: 10, maxAttributeClearPercent: 20 };

describe('attribute guard', () => {
  it('within both limits: the verdict stays quiet and carries the figures', () => {
    const v = mergeAttributeGuard(quiet(), { clears: 10, usersAffected: 20, users: 100, limits, allowDeletes: false });
    expect(v).toMatchObject({
      tripped: false,
      overridden: false,
      reasons: [],
      attributes: {
        attributeClears: 10,
        attributeClearUsers: 20,
        attributeUsers: 100,
        maxAttributeClears: 10,
        maxAttributeClearPercent: 20,
      },
    });
  });

  it('more values taken away than maxAttributeClears trips it', () => {
    const v = mergeAttributeGuard(quiet(), { clears: 11, usersAffected: 5, users: 100, limits, allowDeletes: false });
    expect(v.tripped).toBe(true);
    expect(v.reasons).toEqual(['11 user attribute values taken away exceed guards.maxAttributeClears (10)']);
  });

  it('too large a share of users losing a value trips it', () => {
    const v = mergeAttributeGuard(quiet(), { clears: 3, usersAffected: 3, users: 10, limits, allowDeletes: false });
    expect(v.reasons).toEqual([
      '3 of 10 synced users (30.0%) lose a user attribute value, exceeding guards.maxAttributeClearPercent (20%)',
    ]);
    expect(v.tripped).toBe(true);
  });

  it('--allow-deletes overrides; a verdict already tripped by deletions stays tripped with its reasons first', () => {
    expect(mergeAttributeGuard(quiet(), { clears: 11, usersAffected: 1, users: 100, limits, allowDeletes: true })).toMatchObject({
      tripped: false,
      overridden: true,
    });
    const deletions = evaluateGuard({
      destructive: 60,
      managed: 100,
      memberRemovals: 0,
      members: 0,
      sourceEmpty: false,
      sourceRejectedUsers: 0,
      sourceMembersEmpty: false,
      unidentified: [],
      limits: { ...LIMITS, maxDeletePercent: 100 },
      allowDeletes: false,
    });
    const v = mergeAttributeGuard(deletions, { clears: 0, usersAffected: 0, users: 100, limits, allowDeletes: false });
    expect(v.tripped).toBe(true);
    expect(v.reasons).toEqual(deletions.reasons);
  });

  it('an approval releases a plan only when its take-aways are no more than were held', () => {
    const held = { destructive: 0, memberRemovals: 0, attributeClears: 11 };
    expect(
      mergeAttributeGuard(quiet(), { clears: 11, usersAffected: 11, users: 100, limits, allowDeletes: false, approval: held }),
    ).toMatchObject({ tripped: false, overridden: true });
    const larger = mergeAttributeGuard(quiet(), { clears: 12, usersAffected: 12, users: 100, limits, allowDeletes: false, approval: held });
    expect(larger.tripped).toBe(true);
    expect(larger.reasons).toContain(
      'the approval covers 11 user attribute values taken away; this plan has 12: approve again after checking it',
    );
    // An approval given before attributes were held covers none.
    expect(
      mergeAttributeGuard(quiet(), {
        clears: 11,
        usersAffected: 1,
        users: 100,
        limits,
        allowDeletes: false,
        approval: { destructive: 5, memberRemovals: 5 },
      }).tripped,
    ).toBe(true);
  });
});
