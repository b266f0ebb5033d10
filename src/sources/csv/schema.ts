import { z } from 'zod';

const column = z.string().min(1);

export const csvSourceSchema = z.strictObject({
  type: z.literal('csv'),
  /** The HR export, one row per user, with a header row. Relative to the config file. */
  path: z.string().min(1),
  delimiter: z.string().length(1).default(','),
  /** Which column feeds which field of the normalized user. */
  columns: z.strictObject({
    externalId: column,
    userName: column,
    givenName: column.optional(),
    familyName: column.optional(),
    displayName: column.optional(),
    /** One column or several; the first non-empty address is primary. */
    emails: z.union([column, z.array(column).min(1)]).optional(),
    active: column.optional(),
    /** Group names, separated by `groupSeparator`. */
    groups: column.optional(),
    /** `attributes.<key>` ← column, e.g. `{ department: Department, title: Job Title }`. */
    attributes: z.record(z.string().min(1), column).default({}),
  }),
  /** Cell values (case-insensitive, trimmed) of the active column; anything else rejects the row. */
  activeValues: z
    .strictObject({
      true: z.array(z.string()).min(1).default(['true', 'yes', 'y', '1', 'active', 'enabled']),
      false: z.array(z.string()).min(1).default(['false', 'no', 'n', '0', 'inactive', 'disabled', 'terminated', 'suspended']),
    })
    .prefault({}),
  groupSeparator: z.string().min(1).default(';'),
  /** A file without data rows is an error unless set (an empty export must not deprovision everyone). */
  allowEmpty: z.boolean().default(false),
});

export type CsvSourceConfig = z.infer<typeof csvSourceSchema>;
export type CsvSourceInput = z.input<typeof csvSourceSchema>;
