/**
 * Bad filters are errors, not empty answers (issue 16, point 12): an item type that Zotero's
 * schema does not have, alone or as an operand of an expression (`a || b`, `-a`, a list), is a
 * validation_error with the closest types, on both surfaces and before any request; the
 * listings' other known lists (sort fields, tag types) say "did you mean" too. The CLI runs in
 * process (no build needed).
 */
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/surfaces/cli/main.js';
import { groups, tools } from '../../src/tools/index.js';
import { startWorld, type World } from '../core/library/world.js';
import { I, startSample, texts, type Envelope, type Mcp, type Sample } from './items/read/setup.js';

class Sink extends Writable {
  text = '';
  override _write(chunk: unknown, _encoding: BufferEncoding, done: () => void): void {
    this.text += String(chunk);
    done();
  }
}

/** `zot ARGS` in process with stdout piped: its exit code and its one JSON envelope. */
async function zot(argv: string[], env: Record<string, string>) {
  const stdout = new Sink();
  const stderr = new Sink();
  const stdin = new PassThrough();
  stdin.end();
  const code = await runCli({ argv, env, io: { stdout, stderr, stdin }, tools, groups });
  return { code, envelope: JSON.parse(stdout.text) as Envelope };
}

let sample: Sample;
let mcp: Mcp;
let web: World;

beforeAll(async () => {
  sample = await startSample();
  mcp = await sample.mcp();
  web = await startWorld();
  web.server.library('users/1').addItems([{ itemType: 'book', title: 'A book' }]);
});

afterAll(async () => {
  await mcp?.close();
  await sample?.close();
  await web?.close();
});

describe('item types are checked against Zotero’s schema', () => {
  it('`--type -attachment` is a value (an excluding filter), not an unknown flag', async () => {
    const r = await zot(['search', '--type', '-attachment', '--include-children'], sample.env());
    expect(r.code).toBe(0);
    const items = (r.envelope.data as { items: Array<{ data: { itemType: string } }> }).items;
    expect(items.length).toBeGreaterThan(0);
    expect(items.filter((i) => i.data.itemType === 'attachment')).toEqual([]);
    const typo = await zot(['search', '--type', '-atachment'], sample.env());
    expect(typo.code).toBe(3);
    expect(typo.envelope.error.message).toContain("did you mean 'attachment'?");
  });

  it('`zot semantic-search --collection` with a key that names no collection is not_found, not 0 hits', async () => {
    const r = await zot(['semantic-search', 'ice', '--collection', 'ZZZZ2345'], sample.env());
    expect(r.envelope.error).toMatchObject({
      code: 'not_found',
      field: 'collection_key',
      message: 'No collection "ZZZZ2345" in users/8675309.',
    });
    expect(r.code).toBe(4);
    // A collection that exists and holds no match is an answer with no hits.
    const empty = await zot(
      ['semantic-search', 'transformer attention', '--collection', 'SEALEVE2'],
      sample.env(),
    );
    expect(empty.code).toBe(0);
    expect((empty.envelope.data as { hits: unknown[] }).hits).toEqual([]);
  });

  it('`zot semantic-search --type bok` too: refused before the index is read', async () => {
    const r = await zot(['semantic-search', 'ice', '--type', 'bok'], sample.env());
    expect(r.code).toBe(3);
    expect(r.envelope.error).toMatchObject({
      code: 'validation_error',
      field: 'item_type',
      message: "--type 'bok' is not a Zotero item type (did you mean 'book'?).",
    });
  });

  it('`zot search --type bok` is a validation_error with "did you mean book", exit 3', async () => {
    const r = await zot(['search', '--type', 'bok'], sample.env());
    expect(r.code).toBe(3);
    expect(r.envelope.ok).toBe(false);
    expect(r.envelope.error).toMatchObject({
      code: 'validation_error',
      field: 'item_type',
      message: "--type 'bok' is not a Zotero item type (did you mean 'book'?).",
    });
    expect(r.envelope.error.hint).toMatch(
      /^Item types: annotation, artwork, attachment, .*, webpage; combine/,
    );
    expect(r.envelope.error.hint).toContain('`zot item-types`');
  });

  it.each([
    [
      ['search', '--type', 'book || jounalArticle'],
      `'jounalArticle' (in "book || jounalArticle")`,
      'journalArticle',
    ],
    [['list', '--type=-attachmnt'], `'attachmnt' (in "-attachmnt")`, 'attachment'],
    [['recent', '--type', 'Book'], `'Book'`, 'book'],
  ])('each operand of an expression: zot %j', async (argv, what, near) => {
    const r = await zot(argv, sample.env());
    expect(r.code).toBe(3);
    expect(r.envelope.error.message).toBe(
      `--type ${what} is not a Zotero item type (did you mean '${near}'?).`,
    );
  });

  it('an empty operand is refused, not read as "no type"', async () => {
    const r = await zot(['search', '--type', 'book ||'], sample.env());
    expect(r.code).toBe(3);
    expect(r.envelope.error.message).toBe(
      '--type "book ||" has an empty item type: each side of "||", and what follows a leading "-", must be one.',
    );
  });

  it('Zotero’s expressions of known types still filter', async () => {
    const books = await zot(['search', '--type', 'book'], sample.env());
    const keys = (books.envelope.data.items as Array<{ key: string }>).map((i) => i.key);
    expect(keys).toContain(I.deepLearningBook);
    const either = await zot(['search', '--type', 'book || journalArticle'], sample.env());
    const types = new Set(
      (either.envelope.data.items as Array<{ data: { itemType: string } }>).map((i) => i.data.itemType),
    );
    expect([...types].sort()).toEqual(['book', 'journalArticle']);
    const notBooks = await zot(['search', '--type=-book'], sample.env());
    expect(
      (notBooks.envelope.data.items as Array<{ data: { itemType: string } }>).some(
        (i) => i.data.itemType === 'book',
      ),
    ).toBe(false);
  });

  it('on MCP: an isError result in the parameter’s own name, a list checked entry by entry', async () => {
    const r = await mcp.call('zotero_search_items', { item_type: ['-note', 'bok'] });
    expect(r.isError).toBe(true);
    expect(texts(r)[0]).toMatch(
      /^validation_error: item_type 'bok' is not a Zotero item type \(did you mean 'book'\?\)\.\n/,
    );
  });

  it('is refused before any request: the Web API sees nothing', async () => {
    web.server.clearLog();
    const r = await zot(['search', '--type', 'bok'], web.env());
    expect(r.envelope.error.code).toBe('validation_error');
    expect(web.server.log).toEqual([]);
    const ok = await zot(['search', '--type', 'book'], web.env());
    expect(ok.envelope.data.totalResults).toBe(1);
  });
});

describe('the other known lists of the listings say "did you mean" too', () => {
  it.each([
    [['search', '--sort', 'titel'], 'sort', "did you mean 'title'?"],
    [['list', '--direction', 'dsc'], 'direction', "did you mean 'asc' or 'desc'?"],
    [['search', 'x', '--qmode', 'everyting'], 'qmode', "did you mean 'everything'?"],
    [['tag', 'list', '--type', 'manul'], 'type', "did you mean 'manual'?"],
    [['tag', 'list', '--sort', 'numitems'], 'sort', "did you mean 'numItems'?"],
  ])('zot %j', async (argv, field, near) => {
    const r = await zot(argv, sample.env());
    expect(r.code).toBe(3);
    expect(r.envelope.error).toMatchObject({ code: 'validation_error', field });
    expect(r.envelope.error.message).toContain(near);
  });
});
