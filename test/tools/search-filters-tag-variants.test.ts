/**
 * A tag filter that matched nothing says why when the library has the tag in another case or
 * spacing (issue 16, point 12): only when the answer is empty, from the backend's own tag list on
 * zotero.sqlite (no request at all), and with one bounded tag search on the Web API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import searchItems from '../../src/tools/items/search-items.js';
import type { AnyTool, Deps } from '../../src/core/tool.js';
import { startWorld, type World } from '../core/library/world.js';
import { startSample, structured, texts, type Mcp, type Sample } from './items/read/setup.js';

let sample: Sample;
let local: Deps;
let mcp: Mcp;
let web: World;
let webDeps: Deps;

beforeAll(async () => {
  sample = await startSample();
  local = sample.deps();
  mcp = await sample.mcp();
  web = await startWorld();
  web.server.library('users/1').addItems([
    { title: 'Warming', tags: [{ tag: 'climate' }] },
    { title: 'Ice', tags: [{ tag: 'ice  sheets' }] },
  ]);
  webDeps = web.deps({ env: { ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9' } });
  // The key's check, once: what the requests counted below are spared.
  await search({}, webDeps);
});

afterAll(async () => {
  await mcp?.close();
  await webDeps?.services.close();
  await web?.close();
  await sample?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function search(input: Record<string, unknown>, deps: Deps): Promise<any> {
  const tool = searchItems as unknown as AnyTool;
  return tool.output.parse(await tool.run(tool.input.parse(input), deps));
}

describe('on zotero.sqlite', () => {
  it('a tag that differs only in case: an empty answer whose message names the library’s tag', async () => {
    const r = await search({ tag: 'Sea Level' }, local);
    expect(r).toMatchObject({ totalResults: 0, items: [], backend: 'sqlite' });
    expect(r.message).toBe(
      'No item has the tag "Sea Level"; the library has "sea level" (tags match exactly).',
    );
  });

  it('spacing counts as no difference either; several variants are all named', async () => {
    expect((await search({ tag: 'sealevel' }, local)).message).toBe(
      'No item has the tag "sealevel"; the library has "sea level" (tags match exactly).',
    );
    expect((await search({ tag: 'OCEANOGRAPHY' }, local)).message).toBe(
      'No item has the tag "OCEANOGRAPHY"; the library has "Oceanography" and "oceanography" (tags match exactly).',
    );
  });

  it('each wanted operand of an expression; excluded ones are not asked about', async () => {
    const r = await search({ tag: ['Ipcc || Greenlnd', '-Attention'] }, local);
    expect(r.totalResults).toBe(0);
    expect(r.message).toBe('No item has the tag "Ipcc"; the library has "IPCC" (tags match exactly).');
  });

  it('no message when something matched, when the tag exists as written, or when nothing is close', async () => {
    const some = await search({ tag: 'Sea Level || IPCC' }, local);
    expect(some.totalResults).toBeGreaterThan(0);
    expect(some.message).toBeUndefined();
    const exact = await search({ tag: 'IPCC', item_type: 'book' }, local);
    expect(exact.totalResults).toBe(0);
    expect(exact.message).toBeUndefined();
    const far = await search({ tag: 'nothing like it' }, local);
    expect(far.totalResults).toBe(0);
    expect(far.message).toBeUndefined();
  });

  it('on MCP the one-line summary says it too', async () => {
    const r = await mcp.call('zotero_search_items', { tag: 'Sea Level' });
    expect(r.isError).toBeFalsy();
    expect(structured(r).message).toBe(
      'No item has the tag "Sea Level"; the library has "sea level" (tags match exactly).',
    );
    expect(texts(r)[0]).toBe(
      'No items (sqlite). No item has the tag "Sea Level"; the library has "sea level" (tags match exactly).',
    );
  });
});

describe('on the Web API', () => {
  const paths = () => web.server.log.map((e) => e.path);

  it('one extra request, a tag search bounded to 100 tags, only when the answer is empty', async () => {
    web.server.clearLog();
    const r = await search({ tag: 'Climate' }, webDeps);
    expect(r).toMatchObject({ totalResults: 0, backend: 'web' });
    expect(r.message).toBe('No item has the tag "Climate"; the library has "climate" (tags match exactly).');
    expect(paths()).toEqual(['/users/1/items/top', '/users/1/tags']);
    expect(web.server.log[1]?.query).toMatchObject({ q: 'climate', qmode: 'contains', limit: '100' });

    web.server.clearLog();
    expect((await search({ tag: 'climate' }, webDeps)).totalResults).toBe(1);
    expect(paths()).toEqual(['/users/1/items/top']);
  });

  it('spacing: "Ice Sheets" finds "ice  sheets" through its longest word', async () => {
    web.server.clearLog();
    const r = await search({ tag: 'Ice Sheets' }, webDeps);
    expect(r.message).toBe(
      'No item has the tag "Ice Sheets"; the library has "ice  sheets" (tags match exactly).',
    );
    expect(web.server.log[1]?.query).toMatchObject({ q: 'sheets' });
  });

  it('nothing close: the empty answer without a message, still one tag search', async () => {
    web.server.clearLog();
    const r = await search({ tag: 'volcanoes' }, webDeps);
    expect(r.totalResults).toBe(0);
    expect(r.message).toBeUndefined();
    expect(paths()).toEqual(['/users/1/items/top', '/users/1/tags']);
  });
});
