/**
 * Compact listings for agents (issue 16, point 18): search, list and recent leave out empty
 * values (empty strings, lists and objects, null), `fields` (MCP: a list; CLI: a comma list)
 * chooses what each item keeps, an unknown field name is a validation_error with "did you mean",
 * the output still validates against the declared output schema, and reading one item keeps
 * everything. The CLI runs in process (no build needed).
 */
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyTool, Deps } from '../../src/core/tool.js';
import { runCli } from '../../src/surfaces/cli/main.js';
import getItem from '../../src/tools/items/get-item.js';
import searchItems from '../../src/tools/items/search-items.js';
import { groups, tools } from '../../src/tools/index.js';
import { startWorld, type World } from '../core/library/world.js';
import {
  I,
  startSample,
  structured,
  texts,
  type Envelope,
  type Mcp,
  type Sample,
} from './items/read/setup.js';

class Sink extends Writable {
  text = '';
  override _write(chunk: unknown, _encoding: BufferEncoding, done: () => void): void {
    this.text += String(chunk);
    done();
  }
}

/** `zot ARGS` in process with stdout piped: exit code, stdout, and its JSON lines. */
async function zot(argv: string[], env: Record<string, string>) {
  const stdout = new Sink();
  const stderr = new Sink();
  const stdin = new PassThrough();
  stdin.end();
  const code = await runCli({ argv, env, io: { stdout, stderr, stdin }, tools, groups });
  const lines = () =>
    stdout.text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Envelope & Record<string, unknown>);
  return {
    code,
    stdout: stdout.text,
    lines,
    get envelope() {
      return lines()[0] as Envelope;
    },
  };
}

/** Every path below `value` whose value is empty (what a compact listing must not hold). */
function emptyPaths(value: unknown, path = ''): string[] {
  if (value === null || value === '') return [path];
  if (Array.isArray(value)) {
    return value.length === 0 ? [path] : value.flatMap((v, i) => emptyPaths(v, `${path}[${i}]`));
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.length === 0 ? [path] : entries.flatMap(([k, v]) => emptyPaths(v, `${path}.${k}`));
  }
  return [];
}

/** The item without its empty values, written independently of the product's code. */
function stripped(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripped);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const s = stripped(v);
    if (emptyPaths(s).length === 1 && emptyPaths(s)[0] === '') continue;
    out[k] = s;
  }
  return out;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function run(declaration: object, input: Record<string, unknown>, deps: Deps): Promise<any> {
  const tool = declaration as AnyTool;
  return tool.output.parse(await tool.run(tool.input.parse(input), deps));
}

let sample: Sample;
let deps: Deps;
let mcp: Mcp;

beforeAll(async () => {
  sample = await startSample();
  deps = sample.deps();
  mcp = await sample.mcp();
});

afterAll(async () => {
  await mcp?.close();
  await sample?.close();
});

describe('empty values are left out of item listings by default', () => {
  it.each([[['search', '--limit', '25']], [['list']], [['recent']]])('zot %j', async (argv) => {
    const r = await zot(argv, sample.env());
    expect(r.code).toBe(0);
    const items = r.envelope.data.items as unknown[];
    expect(items.length).toBeGreaterThan(5);
    expect(items.flatMap((item) => emptyPaths(item))).toEqual([]);
  });

  it('a listed item is the item as zot read gives it, less its empty values; the read keeps them', async () => {
    const listed = await run(searchItems, { limit: 100 }, deps);
    for (const key of [I.seaLevelArticle, I.attentionPaper, I.deepLearningBook, I.muellerThesis]) {
      const read = (await run(getItem, { item_key: key }, deps)).item;
      expect(emptyPaths(read).length).toBeGreaterThan(0);
      const item = listed.items.find((i: { key: string }) => i.key === key);
      expect(item).toEqual(stripped(read));
    }
  });

  it('numbers stay, 0 included (numChildren)', async () => {
    const listed = await run(searchItems, { limit: 100 }, deps);
    const counts = listed.items.map((i: { meta?: { numChildren?: number } }) => i.meta?.numChildren);
    expect(counts).toContain(0);
  });
});

describe('fields chooses what each item keeps', () => {
  it('`zot search --fields key,title,creators,year`: the key, those data fields, and the year in meta', async () => {
    const r = await zot(['search', 'sea-level rise', '--fields', 'key,title,creators,year'], sample.env());
    expect(r.code).toBe(0);
    const church = (r.envelope.data.items as Array<{ key: string }>).find((i) => i.key === I.seaLevelArticle);
    expect(church).toEqual({
      key: I.seaLevelArticle,
      meta: { year: '2011' },
      data: {
        title: 'Sea-level rise from the late 19th to the early 21st century',
        creators: [
          { creatorType: 'author', firstName: 'John A.', lastName: 'Church' },
          { creatorType: 'author', firstName: 'Neil J.', lastName: 'White' },
        ],
      },
    });
  });

  it('is several times smaller than the default listing', async () => {
    const whole = await zot(['search', '--limit', '25'], sample.env());
    const chosen = await zot(
      ['search', '--limit', '25', '--fields', 'key,title,creators,year'],
      sample.env(),
    );
    expect(chosen.envelope.data.items).toHaveLength(25);
    expect(chosen.stdout.length * 2).toBeLessThan(whole.stdout.length);
    for (const item of chosen.envelope.data.items as Array<Record<string, unknown>>) {
      expect(Object.keys(item).filter((k) => !['key', 'meta', 'data'].includes(k))).toEqual([]);
    }
  });

  it('a base field stands for the field of the item’s type mapped onto it; empty chosen fields are left out', async () => {
    const r = await run(searchItems, { q: 'Sea Level Change', fields: ['publicationTitle', 'DOI'] }, deps);
    const section = r.items.find((i: { data?: { bookTitle?: string } }) => i.data?.bookTitle);
    expect(section.data).toEqual({
      bookTitle:
        'Climate Change 2013: The Physical Science Basis. Contribution of Working Group I to the Fifth Assessment Report',
    });
  });

  it('over MCP: a list of names; the result validates against the output schema', async () => {
    const r = await mcp.call('zotero_search_items', {
      q: 'attention',
      fields: ['title', 'version', 'numChildren'],
    });
    expect(r.isError).toBeFalsy();
    const out = structured<{ items: Array<Record<string, unknown>> }>(r);
    expect(out.items[0]).toEqual({
      key: I.attentionPaper,
      version: 1250,
      meta: { numChildren: 2 },
      data: { title: 'Attention Is All You Need' },
    });
    expect((searchItems as unknown as AnyTool).output.safeParse(out).success).toBe(true);
    expect(JSON.parse(texts(r)[1] as string)).toEqual(out);
  });

  it('streams the chosen fields row by row', async () => {
    const r = await zot(['search', '--stream', '--limit', '3', '--fields', 'itemType'], sample.env());
    expect(r.code).toBe(0);
    const rows = r
      .lines()
      .filter((l) => 'data' in l)
      .map((l) => l.data as Record<string, unknown>);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(Object.keys(row).sort()).toEqual(['data', 'key']);
  });

  it('a table shows the chosen fields, in the order asked', async () => {
    const r = await zot(
      ['search', 'sea-level rise', '--fields', 'year,title,creators'],
      sample.env({ ZOT_FORMAT: 'table' }),
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      `${I.seaLevelArticle}  2011  Sea-level rise from the late 19th to the early 21st century  Church, John A.; White, Neil J.`,
    );
  });
});

describe('unknown field names are refused with "did you mean"', () => {
  it('on the CLI: exit 3, the flag, the name, the closest field', async () => {
    const r = await zot(['search', '--fields', 'key,titel'], sample.env());
    expect(r.code).toBe(3);
    expect(r.envelope.error).toMatchObject({
      code: 'validation_error',
      field: 'fields',
      message: "--fields 'titel' is not a field of an item (did you mean 'title'?).",
    });
    expect(r.envelope.error.hint).toContain('plus key, version, library, creatorSummary');
  });

  it('on MCP, field names are spelled as Zotero spells them', async () => {
    const r = await mcp.call('zotero_search_items', { fields: ['doi', 'nope'] });
    expect(r.isError).toBe(true);
    expect(texts(r)[0]).toMatch(
      /^validation_error: fields 'doi', 'nope' are not fields of an item \(did you mean 'DOI'\?\)\.\n/,
    );
  });

  it('names and nothing else: an entry of commas only names no field', async () => {
    const r = await zot(['list', '--fields', ','], sample.env());
    expect(r.code).toBe(3);
    expect(r.envelope.error.message).toBe('--fields names no field.');
  });
});

describe('on the Web API', () => {
  let web: World;
  let webDeps: Deps;
  beforeAll(async () => {
    web = await startWorld();
    web.server.library('users/1').addItems([
      {
        title: 'Sea-level rise',
        creators: [{ creatorType: 'author', lastName: 'Church', firstName: 'John' }],
      },
      { itemType: 'book', title: 'Deep Learning', date: '2016' },
    ]);
    webDeps = web.deps({ env: { ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9' } });
  });
  afterAll(async () => {
    await webDeps?.services.close();
    await web?.close();
  });

  it('the same rule: no empty values; fields picks the same way', async () => {
    const all = await run(searchItems, {}, webDeps);
    expect(all.backend).toBe('web');
    expect(all.items).toHaveLength(2);
    expect(all.items.flatMap((i: unknown) => emptyPaths(i))).toEqual([]);
    const picked = await run(searchItems, { q: 'deep', fields: ['itemType', 'year'] }, webDeps);
    expect(picked.items).toEqual([
      { key: expect.any(String), meta: { year: '2016' }, data: { itemType: 'book' } },
    ]);
  });
});
