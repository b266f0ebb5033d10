/** The platform's user-attribute types (spec: shown); no imports, so the config schema can use it. */
export const USER_ATTRIBUTE_TYPES = ['string', 'number', 'boolean', 'string_array', 'number_array'] as const;
export type UserAttributeType = (typeof USER_ATTRIBUTE_TYPES)[number];
