/** The JSON-Schema subset validator the chart tests rely on: each keyword accepts and rejects. */
import { describe, expect, it } from 'vitest';
import { validate, type JsonSchema } from './support/json-schema.ts';

const paths = (schema: JsonSchema, value: unknown): string[] => validate(schema, value).map((i) => `${i.path}: ${i.message}`);

describe('json-schema validator', () => {
  it('checks type, with integer a kind of number and a list of types', () => {
    expect(paths({ type: 'integer' }, 3)).toEqual([]);
    expect(paths({ type: 'integer' }, 3.5)).toEqual(['(root): must be integer, got number']);
    expect(paths({ type: 'number' }, 3)).toEqual([]);
    expect(paths({ type: ['string', 'null'] }, null)).toEqual([]);
    expect(paths({ type: 'object' }, [])).toEqual(['(root): must be object, got array']);
    expect(paths({ type: 'boolean' }, 'true')).toEqual(['(root): must be boolean, got string']);
  });

  it('checks properties, required and closed objects at their path', () => {
    const schema: JsonSchema = {
      type: 'object',
      additionalProperties: false,
      required: ['a'],
      properties: { a: { type: 'object', additionalProperties: false, properties: { b: { type: 'string' } } } },
    };
    expect(paths(schema, { a: { b: 'x' } })).toEqual([]);
    expect(paths(schema, {})).toEqual(['a: is required']);
    expect(paths(schema, { a: { b: 1, c: true }, d: 1 })).toEqual([
      'a.b: must be string, got integer',
      'a.c: is not allowed (unknown key)',
      'd: is not allowed (unknown key)',
    ]);
  });

  it('checks maps: additionalProperties as a schema, and propertyNames', () => {
    const schema: JsonSchema = { type: 'object', propertyNames: { pattern: '^[a-z]+$' }, additionalProperties: { type: 'string' } };
    expect(paths(schema, { ok: 'v' })).toEqual([]);
    expect(paths(schema, { ok: 1, 'Bad!': 'v' })).toEqual(['ok: must be string, got integer', 'Bad!: key name must match ^[a-z]+$']);
  });

  it('checks enum, const, pattern and string lengths', () => {
    expect(paths({ enum: ['a', 1] }, 1)).toEqual([]);
    expect(paths({ enum: ['a', 1] }, 'b')).toEqual(['(root): must be one of "a", 1']);
    expect(paths({ const: 'x' }, 'y')).toEqual(['(root): must be "x"']);
    expect(paths({ type: 'string', pattern: '^rediss?://' }, 'http://x')).toEqual(['(root): must match ^rediss?://']);
    expect(paths({ type: 'string', minLength: 2, maxLength: 3 }, 'a')).toEqual(['(root): must have at least 2 characters']);
    expect(paths({ type: 'string', minLength: 2, maxLength: 3 }, 'abcd')).toEqual(['(root): must have at most 3 characters']);
  });

  it('checks numeric bounds, inclusive and exclusive', () => {
    const schema: JsonSchema = { type: 'number', minimum: 1, maximum: 10, exclusiveMinimum: 0, exclusiveMaximum: 10 };
    expect(paths(schema, 5)).toEqual([]);
    expect(paths(schema, 0)).toEqual(['(root): must be >= 1', '(root): must be > 0']);
    expect(paths(schema, 10)).toEqual(['(root): must be < 10']);
    expect(paths(schema, 11)).toEqual(['(root): must be <= 10', '(root): must be < 10']);
  });

  it('checks arrays: items at their index, sizes and uniqueness', () => {
    const schema: JsonSchema = { type: 'array', minItems: 1, maxItems: 2, uniqueItems: true, items: { type: 'integer', minimum: 0 } };
    expect(paths(schema, [1, 2])).toEqual([]);
    expect(paths(schema, [])).toEqual(['(root): must have at least 1 items']);
    expect(paths(schema, [1, -1, 1])).toEqual(['(root): must have at most 2 items', '(root): must not repeat items', '[1]: must be >= 0']);
  });

  it('follows local $ref and combines anyOf, oneOf and allOf, reporting the closest branch', () => {
    const schema: JsonSchema = {
      definitions: { port: { type: 'integer', minimum: 1, maximum: 65535 } },
      type: 'object',
      additionalProperties: false,
      properties: {
        port: { anyOf: [{ $ref: '#/definitions/port' }, { type: 'string', pattern: '^[a-z]+$' }] },
        one: { oneOf: [{ type: 'integer' }, { type: 'number', minimum: 0 }] },
        all: { allOf: [{ type: 'string' }, { minLength: 2 }] },
        shape: {
          anyOf: [
            { type: 'object', additionalProperties: false, required: ['a'], properties: { a: { type: 'string' } } },
            {
              type: 'object',
              additionalProperties: false,
              required: ['list'],
              properties: { list: { type: 'array', items: { type: 'object', additionalProperties: false, properties: {} } } },
            },
          ],
        },
      },
    };
    expect(paths(schema, { port: 443, one: 1.5, all: 'ab', shape: { a: 'x' } })).toEqual([]);
    expect(paths(schema, { port: 'http' })).toEqual([]);
    expect(paths(schema, { port: 70000 })).toEqual(['port: matches none of the 2 allowed shapes', 'port: must be <= 65535']);
    expect(paths(schema, { one: 2 })).toEqual(['one: matches 2 shapes, exactly one allowed']);
    expect(paths(schema, { all: 'a' })).toEqual(['all: must have at least 2 characters']);
    expect(paths(schema, { shape: { list: [{ typo: 1 }] } })).toEqual([
      'shape: matches none of the 2 allowed shapes',
      'shape.list[0].typo: is not allowed (unknown key)',
    ]);
  });

  it('refuses schemas that use a keyword it does not implement, instead of skipping it', () => {
    expect(() => validate({ type: 'string', format: 'uri' }, 'x')).toThrow(/unsupported keyword "format"/);
    expect(() => validate({ properties: { a: { if: {} } } }, {})).toThrow(/properties\/a: unsupported keyword "if"/);
    expect(() => validate({ $ref: 'https://example.com/s.json' }, 1)).toThrow(/only local/);
  });
});
