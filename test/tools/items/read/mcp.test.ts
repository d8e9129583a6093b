/**
 * The read tools over MCP (the SDK client, in memory; it checks structuredContent against each
 * tool's outputSchema): on the sample zotero.sqlite without a key, and on the Web API test
 * server, in read-only mode too; errors come back as isError results with `_meta`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY, startWorld, type World } from '../../../core/library/world.js';
import {
  C,
  I,
  mcpClient,
  SAMPLE_USER,
  startSample,
  structured,
  texts,
  type Mcp,
  type Sample,
} from './setup.js';

const READ_TOOLS = [
  'zotero_search_items',
  'zotero_get_item',
  'zotero_list_tags',
  'zotero_stats',
  'zotero_summarize',
];

describe('read tools over MCP on zotero.sqlite (no key)', () => {
  let sample: Sample;
  let mcp: Mcp;
  beforeAll(async () => {
    sample = await startSample();
    mcp = await sample.mcp({ ZOTEUS_READ_ONLY: 'true' });
  });
  afterAll(async () => {
    await mcp?.close();
    await sample?.close();
  });

  it('every read tool is offered in read-only mode', async () => {
    const names = await mcp.listTools();
    for (const name of READ_TOOLS) expect(names).toContain(name);
  });

  it('zotero_search_items: summary line, the output as JSON text, structuredContent with backend', async () => {
    const r = await mcp.call('zotero_search_items', { q: 'sea level', limit: 3 });
    expect(r.isError).toBeFalsy();
    const [summary, body] = texts(r);
    expect(summary).toMatch(
      /^Showing 1–3 of \d+ items matching "sea level" \(sqlite\)\. Continue with start=3\.$/,
    );
    expect(JSON.parse(body!)).toEqual(structured(r));
    expect(texts(r)).toHaveLength(2);
    expect(structured(r)).toMatchObject({ backend: 'sqlite', library: SAMPLE_USER, start: 0, nextStart: 3 });
    expect((structured(r).items as unknown[]).length).toBe(3);
    const accent = await mcp.call('zotero_search_items', { q: 'muller' });
    expect((structured(accent).items as Array<{ key: string }>).map((i) => i.key)).toContain(I.muellerThesis);
  });

  it('zotero_get_item and zotero_summarize', async () => {
    const item = await mcp.call('zotero_get_item', { item_key: I.seaLevelArticle });
    expect(item.isError).toBeFalsy();
    expect(texts(item)[0]).toBe(
      `${I.seaLevelArticle}: Church, J. A., & White, N. J. (2011). Sea-level rise from the late 19th to the early 21st century. Surveys in Geophysics, 32(4-5), 585-602. https://doi.org/10.1007/s10712-011-9119-1 (sqlite)`,
    );
    expect(structured(item)).toMatchObject({
      collections: [{ key: C.seaLevel, name: 'Sea Level' }],
      provenance: expect.any(String),
    });
    const digest = await mcp.call('zotero_summarize', { item_keys: [I.attentionPaper] });
    expect(texts(digest)[0]).toBe('1 digest (sqlite).');
    const copy = JSON.parse(texts(digest)[1]!) as { digests: Array<{ key: string; citation: string }> };
    expect(copy).toEqual(structured(digest));
    expect(copy.digests[0]!.citation).toMatch(
      /^Vaswani, A\., et al\. \(2017\)\. Attention Is All You Need\./,
    );
  });

  it('zotero_list_tags and zotero_stats', async () => {
    const tags = await mcp.call('zotero_list_tags', { q: 'sea' });
    expect(texts(tags)[0]).toBe('Showing 1–1 of 1 tag containing "sea" (sqlite).');
    const stats = await mcp.call('zotero_stats', {});
    expect(texts(stats)[0]).toMatch(/^users\/8675309 \(sqlite\): \d+ top-level items/);
  });

  it('an unknown key is an isError not_found result with the error in _meta', async () => {
    const malformed = await mcp.call('zotero_get_item', { item_key: 'NOPE' });
    expect(malformed._meta?.['zoteus/error']).toMatchObject({ code: 'not_found', field: 'item_key' });
    const r = await mcp.call('zotero_get_item', { item_key: 'ABCD2345' });
    expect(r.isError).toBe(true);
    expect(texts(r)[0]).toMatch(
      /^not_found: No item "ABCD2345" in [^\n]*\nHint: zotero_search_items \(q: TEXT\) finds valid item keys/,
    );
    expect(r._meta?.['zoteus/error']).toMatchObject({ code: 'not_found', field: 'item_key' });
    const bad = await mcp.call('zotero_search_items', { limit: 0 });
    expect(bad.isError).toBe(true);
  });
});

describe('read tools over MCP on the Web API', () => {
  let world: World;
  let mcp: Mcp;
  let key: string;
  beforeAll(async () => {
    world = await startWorld();
    [key] = world.server.library('users/1').addItems([
      {
        title: 'Attention Is All You Need',
        creators: [{ creatorType: 'author', firstName: 'Ashish', lastName: 'Vaswani' }],
        date: '2017',
      },
    ]) as [string];
    mcp = await mcpClient({
      ZOTERO_API_URL: world.server.url,
      ZOTERO_API_KEY: KEY,
      ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9',
    });
  });
  afterAll(async () => {
    await mcp?.close();
    await world?.close();
  });

  it('search, read and summarize answer with backend "web"', async () => {
    const r = await mcp.call('zotero_search_items', { q: 'attention' });
    expect(r.isError).toBeFalsy();
    expect(structured(r)).toMatchObject({ backend: 'web', library: 'users/1', totalResults: 1 });
    const item = await mcp.call('zotero_get_item', { item_key: key });
    expect(structured(item)).toMatchObject({ backend: 'web', item: { key } });
    const digest = await mcp.call('zotero_summarize', { item_keys: [key] });
    expect(structured(digest)).toMatchObject({
      digests: [{ key, citation: 'Vaswani, A. (2017). Attention Is All You Need.' }],
    });
    const missing = await mcp.call('zotero_get_item', { item_key: 'ABCD2345' });
    expect(missing._meta?.['zoteus/error']).toMatchObject({ code: 'not_found' });
  });
});
