/**
 * `provisioning.userAttributes` (and its sync settings): which platform user attribute gets
 * which value from the source. Same value sources and transforms as `provisioning.mapping`.
 */
import { z } from 'zod';
import { USER_ATTRIBUTE_TYPES } from '../../platform/user-attribute-types.ts';

export const userAttributeRuleSchema = z
  .strictObject({
    /** The platform attribute's name (created when missing). */
    name: z.string().min(1).max(200),
    type: z.enum(USER_ATTRIBUTE_TYPES),
    /** Dotted path into the normalized user, e.g. `attributes.l`. */
    from: z.string().min(1).optional(),
    /** `{attributes.region}-{attributes.costCentre}`; any missing placeholder makes the value missing. */
    template: z.string().min(1).optional(),
    /** A constant. */
    value: z.union([z.string(), z.number(), z.boolean()]).optional(),
    transform: z.enum(['lower', 'upper', 'trim']).optional(),
    /** Array types: split a single string value on this separator (e.g. `;`). */
    split: z.string().min(1).optional(),
    /** The source has no value: `clear` the platform's value (guarded) or `keep` it. */
    whenMissing: z.enum(['clear', 'keep']).default('clear'),
    /** A change that takes a value away counts against guards.maxAttributeClears, and movers are reported. */
    accessRelevant: z.boolean().default(true),
    /** Description of a definition this tool creates (updated only on definitions it created). */
    description: z.string().min(1).optional(),
  })
  .refine((r) => [r.from, r.template, r.value].filter((x) => x !== undefined).length === 1, {
    message: 'a user attribute needs exactly one of `from`, `template` or `value`',
  })
  .refine((r) => r.split === undefined || r.type.endsWith('_array'), {
    message: '`split` only applies to string_array and number_array',
    path: ['split'],
  });

export const userAttributesSchema = z
  .array(userAttributeRuleSchema)
  .default([])
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((r, i) => {
      if (seen.has(r.name))
        ctx.addIssue({
          code: 'custom',
          path: [i, 'name'],
          message: `duplicate user attribute ${JSON.stringify(r.name)}: each attribute is listed once`,
        });
      seen.add(r.name);
    });
  });

export const userAttributeSyncSchema = z
  .strictObject({
    /** A user's values are re-read from the platform when the ledger's copy is older than this (0 = every run). */
    rereadAfterHours: z.number().min(0).default(24),
  })
  .prefault({});

export type UserAttributeRule = z.infer<typeof userAttributeRuleSchema>;
