/** The bounds both surfaces put on their input before a schema sees it (core/input-bounds.ts). */
import { describe, expect, it } from 'vitest';
import { ZoteusError } from '../../src/core/errors.js';
import {
  checkInputBounds,
  MAX_INPUT_DEPTH,
  MAX_INPUT_TEXT,
  MAX_INPUT_VALUES,
  textNestsTooDeep,
} from '../../src/core/input-bounds.js';

/** An array nested `levels` deep (the outermost counts as one), built without recursion. */
function nested(levels: number, inner: unknown = 'x'): unknown {
  let value = inner;
  for (let i = 0; i < levels; i += 1) value = [value];
  return value;
}

const asFlag = (key: string) => `--${key}`;

function refusal(input: Record<string, unknown>, label = asFlag): ZoteusError {
  try {
    checkInputBounds(input, label);
  } catch (error) {
    expect(error).toBeInstanceOf(ZoteusError);
    return error as ZoteusError;
  }
  throw new Error('expected a refusal');
}

describe('checkInputBounds', () => {
  it('accepts what real inputs look like, and nesting up to the limit', () => {
    const item = {
      itemType: 'journalArticle',
      title: 'T',
      creators: [{ creatorType: 'author', firstName: 'A', lastName: 'B' }],
      tags: [{ tag: 't' }],
      relations: { 'dc:relation': ['http://zotero.org/users/1/items/ABCD2345'] },
      constructor: 'a field name like any other, for the schema to judge',
    };
    expect(() => checkInputBounds({ items: [item], limit: 5, q: 'x' }, asFlag)).not.toThrow();
    expect(() => checkInputBounds({ rows: nested(MAX_INPUT_DEPTH) }, asFlag)).not.toThrow();
  });

  it('refuses nesting one level deeper, naming the input as the surface spells it', () => {
    const error = refusal({ limit: 1, items: nested(MAX_INPUT_DEPTH + 1) });
    expect(error.code).toBe('validation_error');
    expect(error.field).toBe('items');
    expect(error.message).toBe(
      '--items is nested deeper than 64 levels; Zoteus inputs nest only a few levels deep.',
    );
    expect(refusal({ items: nested(50_000) }, (k) => k).message).toMatch(/^items is nested deeper/);
    // Objects count as arrays do.
    let object: unknown = 'x';
    for (let i = 0; i < 100_000; i += 1) object = { a: object };
    expect(refusal({ rows: object }).message).toMatch(/^--rows is nested deeper than 64 levels/);
  });

  it('terminates on a cycle (not JSON, but an in-process caller could pass one)', () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(refusal({ items: [loop] }).field).toBe('items');
  });

  it('refuses more values, or more text, than one call takes', () => {
    const many = refusal({ identifiers: new Array<number>(MAX_INPUT_VALUES).fill(0) });
    expect(many.message).toBe('--identifiers holds more than 1,000,000 values, the most one call takes.');
    const long = refusal({ records: 'x'.repeat(MAX_INPUT_TEXT + 1) });
    expect(long.message).toBe('--records holds more than 128 MiB of text, the most one call takes.');
    expect(long.field).toBe('records');
    expect(() => checkInputBounds({ records: 'x'.repeat(1024) }, asFlag)).not.toThrow();
  });

  it('refuses a __proto__ key anywhere inside an input, with its path', () => {
    const items = JSON.parse(
      '[{"itemType":"book"},{"itemType":"book","creators":[{"__proto__":{"x":1}}]}]',
    ) as unknown;
    const error = refusal({ items }, (k) => k);
    expect(error.message).toBe("items[1].creators[0]: unknown field '__proto__'.");
    expect(error.field).toBe('items');
    const top = JSON.parse('[{"__proto__":{"polluted":true}}]') as unknown;
    expect(refusal({ json: top }).message).toBe("--json[0]: unknown field '__proto__'.");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('textNestsTooDeep', () => {
  const deepJson = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

  it('counts JSON arrays and objects, not brackets inside strings', () => {
    expect(textNestsTooDeep(deepJson(MAX_INPUT_DEPTH), 'json')).toBe(false);
    expect(textNestsTooDeep(deepJson(MAX_INPUT_DEPTH + 1), 'json')).toBe(true);
    expect(textNestsTooDeep('{"a":'.repeat(65) + '1' + '}'.repeat(65), 'json')).toBe(true);
    expect(textNestsTooDeep(JSON.stringify({ title: '['.repeat(1000) }), 'json')).toBe(false);
    expect(textNestsTooDeep(JSON.stringify({ title: '\\"['.repeat(1000) }), 'json')).toBe(false);
    // Unbalanced or invalid text is for JSON.parse to refuse.
    expect(textNestsTooDeep('[[[', 'json')).toBe(false);
    expect(textNestsTooDeep(deepJson(1_000_000), 'json')).toBe(true);
  });

  it('counts BibTeX braces, skipping escaped ones', () => {
    const record = (title: string) => `@article{k,\n title = {${title}},\n}\n`;
    expect(textNestsTooDeep(record('{The} {\\"o}uter {{Space}}'), 'bibtex')).toBe(false);
    expect(textNestsTooDeep(record('\\{'.repeat(500)), 'bibtex')).toBe(false);
    expect(textNestsTooDeep(record('{'.repeat(62) + 'x' + '}'.repeat(62)), 'bibtex')).toBe(false);
    expect(textNestsTooDeep(record('{'.repeat(63) + 'x' + '}'.repeat(63)), 'bibtex')).toBe(true);
  });
});
