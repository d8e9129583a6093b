/**
 * The CSL mapping checked field by field against data/zotero-schema.json, read here on its
 * own (not through the product's schema module): for every item type, every field the type has
 * that a CSL text or date variable maps (directly or through its base field) yields that
 * variable, and every creator type its CSL name variable (an unmapped one only when primary,
 * as `author`). A sweep over the schema, not hand-picked cases.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { toCslJson } from '../../../src/core/citations/csl-json.js';
import { buildSchema, type SchemaJson } from '../../../src/core/items/schema.js';
import type { WebApiItem } from '../../../src/core/local/sqlite/types.js';

interface RawSchema {
  itemTypes: Array<{
    itemType: string;
    fields: Array<{ field: string; baseField?: string }>;
    creatorTypes: Array<{ creatorType: string; primary?: boolean }>;
  }>;
  csl: {
    types: Record<string, string[]>;
    fields: { text: Record<string, string[]>; date: Record<string, string> };
    names: Record<string, string>;
  };
}

const raw = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../data/zotero-schema.json', import.meta.url)), 'utf8'),
) as RawSchema;
const schema = buildSchema(raw as unknown as SchemaJson, 'bundled');
const PLACE_IS_EVENT_PLACE = ['audioRecording', 'presentation', 'videoRecording'];

/** Every item type that has a CSL type (all but annotations). */
const types = raw.itemTypes.filter((t) => Object.values(raw.csl.types).some((z) => z.includes(t.itemType)));

function item(itemType: string, fields: Record<string, unknown>): WebApiItem {
  return {
    key: 'SWEEP234',
    version: 1,
    library: { type: 'user', id: 1, name: '' },
    meta: {},
    data: {
      key: 'SWEEP234',
      version: 1,
      itemType,
      tags: [],
      relations: {},
      dateAdded: '2024-01-01T00:00:00Z',
      dateModified: '2024-01-01T00:00:00Z',
      ...fields,
    },
  };
}

/** The names a field answers to in the mappings: itself and its base field. */
const namesOf = (f: { field: string; baseField?: string }) => [
  f.field,
  ...(f.baseField ? [f.baseField] : []),
];

interface TextCase {
  itemType: string;
  field: string;
  variables: string[];
}

const textCases: TextCase[] = [];
const dateCases: Array<{ itemType: string; field: string; variable: string }> = [];
for (const t of types) {
  for (const f of t.fields) {
    const names = namesOf(f);
    const variables = Object.entries(raw.csl.fields.text)
      .filter(([variable, fields]) => variable !== 'shortTitle' && fields.some((x) => names.includes(x)))
      .map(([variable]) => variable);
    if (f.field === 'place' && PLACE_IS_EVENT_PLACE.includes(t.itemType)) variables.push('event-place');
    if (variables.length) textCases.push({ itemType: t.itemType, field: f.field, variables });
    for (const [variable, base] of Object.entries(raw.csl.fields.date)) {
      if (names.includes(base)) dateCases.push({ itemType: t.itemType, field: f.field, variable });
    }
  }
}

describe('every mapped text field of every item type', () => {
  it('is a real sweep', () => {
    expect(types.length).toBeGreaterThanOrEqual(38);
    expect(textCases.length).toBeGreaterThan(500);
    expect(new Set(textCases.map((c) => c.variables).flat()).size).toBeGreaterThanOrEqual(40);
  });

  it.each(textCases)('$itemType.$field → $variables', ({ itemType, field, variables }) => {
    const value = `Value of ${itemType}.${field}`;
    const csl = toCslJson(item(itemType, { [field]: value }), schema);
    const { id: _id, type, ...rest } = csl;
    const expectedType = Object.entries(raw.csl.types).find(([, z]) => z.includes(itemType))?.[0];
    expect(type).toBe(expectedType);
    expect(rest).toEqual(Object.fromEntries(variables.map((v) => [v, value])));
  });
});

describe('every mapped date field of every item type', () => {
  it('is a real sweep', () => {
    expect(dateCases.length).toBeGreaterThan(40);
    expect(new Set(dateCases.map((c) => c.variable))).toEqual(new Set(Object.keys(raw.csl.fields.date)));
  });

  it.each(dateCases)('$itemType.$field → $variable', ({ itemType, field, variable }) => {
    const csl = toCslJson(item(itemType, { [field]: '2019-05-04' }), schema);
    const { id: _id, type: _type, ...rest } = csl;
    expect(rest).toEqual({ [variable]: { 'date-parts': [[2019, 5, 4]] } });
  });
});

describe('every creator type of every item type', () => {
  const cases = types.flatMap((t) =>
    t.creatorTypes.map((c) => ({
      itemType: t.itemType,
      creatorType: c.creatorType,
      variable: raw.csl.names[c.creatorType] ?? (c.primary ? 'author' : undefined),
    })),
  );

  it('is a real sweep, with unmapped roles both primary and not', () => {
    expect(cases.length).toBeGreaterThan(150);
    expect(cases.some((c) => c.variable === undefined)).toBe(true);
    expect(cases.some((c) => c.variable === 'author' && c.creatorType !== 'author')).toBe(true);
  });

  it.each(cases)('$itemType: $creatorType → $variable', ({ itemType, creatorType, variable }) => {
    const csl = toCslJson(
      item(itemType, {
        creators: [
          { creatorType, firstName: 'Ada', lastName: 'Lovelace' },
          { creatorType, name: 'Analytical Society' },
        ],
      }),
      schema,
    );
    const { id: _id, type: _type, ...rest } = csl;
    expect(rest).toEqual(
      variable
        ? { [variable]: [{ family: 'Lovelace', given: 'Ada' }, { literal: 'Analytical Society' }] }
        : {},
    );
  });
});
