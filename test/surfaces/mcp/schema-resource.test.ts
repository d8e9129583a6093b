/**
 * The `zotero://schema` resource: Zotero's item schema as the configured server serves it
 * (`GET /schema`), or the bundled copy when the server does not answer.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startZoteroServer, type ZoteroTestServer } from '../../support/zotero-server/index.js';
import { connect } from './harness.js';

const bundled = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../data/zotero-schema.json', import.meta.url)), 'utf8'),
) as { version: number; itemTypes: Array<{ itemType: string }> };

let server: ZoteroTestServer;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function read(): Promise<{
  version: number;
  source: string;
  itemTypes: Array<Record<string, unknown>>;
}> {
  const mcp = await connect([], { ZOTERO_API_URL: server.url });
  closers.push(mcp.close);
  const listed = await mcp.client.listResources();
  expect(listed.resources.map((r) => r.uri)).toContain('zotero://schema');
  const answer = await mcp.client.readResource({ uri: 'zotero://schema' });
  const first = answer.contents[0] as { mimeType?: string; text: string };
  expect(first.mimeType).toBe('application/json');
  return JSON.parse(first.text);
}

describe('zotero://schema', () => {
  it('is the server’s schema when it serves a newer one', async () => {
    server = await startZoteroServer();
    closers.push(() => server.close());
    const newer = structuredClone(bundled) as typeof bundled & { itemTypes: Array<Record<string, unknown>> };
    newer.version = bundled.version + 1;
    newer.itemTypes.push({
      itemType: 'dataset2',
      fields: [{ field: 'title' }],
      creatorTypes: [{ creatorType: 'author', primary: true }],
    });
    server.setSchema(newer);
    const schema = await read();
    expect(schema).toMatchObject({ version: bundled.version + 1, source: 'server' });
    expect(schema.itemTypes.at(-1)).toEqual({
      itemType: 'dataset2',
      fields: [{ field: 'title' }],
      creatorTypes: ['author'],
    });
    expect(server.log.filter((e) => e.path === '/schema')).toHaveLength(1);
  });

  it('is the bundled copy when the server has no /schema', async () => {
    server = await startZoteroServer();
    closers.push(() => server.close());
    const schema = await read();
    expect(schema).toMatchObject({ version: bundled.version, source: 'bundled' });
    expect(schema.itemTypes.map((t) => t.itemType)).toEqual(bundled.itemTypes.map((t) => t.itemType));
    const book = schema.itemTypes.find((t) => t.itemType === 'book')!;
    expect(book.creatorTypes).toEqual(expect.arrayContaining(['author', 'editor']));
    expect((book.creatorTypes as string[])[0]).toBe('author');
    expect(book.fields).toContainEqual({ field: 'title' });
  });
});
