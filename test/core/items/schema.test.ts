/** The item schema: the bundled copy, validation against it, and the refresh from `/schema`. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { createDeps } from '../../../src/core/deps.js';
import { isZoteusError } from '../../../src/core/errors.js';
import {
  BUNDLED_SCHEMA_PATH,
  fieldFor,
  localSchema,
  onlineSchema,
  readBundledSchema,
  SCHEMA_RETRY_MS,
  SCHEMA_TTL_MS,
  schemaCachePath,
} from '../../../src/core/items/schema.js';
import { checkedItems, validateItems } from '../../../src/core/items/validate.js';
import { createZoteroClient } from '../../../src/core/zotero/index.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { sandbox } from '../../support/cli.js';
import { movableClock } from '../library/world.js';

describe('the bundled schema', () => {
  it('is data/zotero-schema.json, with item types, fields, base fields and creator types', () => {
    expect(BUNDLED_SCHEMA_PATH.endsWith('data/zotero-schema.json')).toBe(true);
    const schema = localSchema({ cacheDir: '/nonexistent', apiUrl: 'http://127.0.0.1:9' });
    expect(schema.source).toBe('bundled');
    expect(schema.version).toBe(readBundledSchema().version);
    expect(schema.types.get('journalArticle')?.fields.has('DOI')).toBe(true);
    expect(fieldFor(schema, 'bookSection', 'publicationTitle')).toBe('bookTitle');
    expect(fieldFor(schema, 'case', 'title')).toBe('caseName');
    expect(fieldFor(schema, 'journalArticle', 'bookTitle')).toBeUndefined();
    expect(schema.types.get('computerProgram')?.primaryCreatorType).toBe('programmer');
  });
});

describe('item validation', () => {
  const schema = localSchema({ cacheDir: '/nonexistent', apiUrl: 'http://127.0.0.1:9' });

  it('accepts valid items of several kinds', () => {
    const items = [
      {
        itemType: 'journalArticle',
        title: 'T',
        creators: [
          { creatorType: 'author', firstName: 'Ada', lastName: 'Lovelace' },
          { creatorType: 'editor', name: 'The Committee' },
        ],
        DOI: '10.1/x',
        tags: [{ tag: 'a' }, { tag: 'b', type: 1 }],
        collections: ['ABCD2345'],
        relations: { 'dc:relation': 'http://zotero.org/users/1/items/ABCD2345' },
      },
      { itemType: 'bookSection', title: 'Ch', bookTitle: 'Book' },
      { itemType: 'note', note: '<p>x</p>', parentItem: 'ABCD2345' },
      { itemType: 'attachment', linkMode: 'linked_url', url: 'https://x', title: 'Link' },
    ];
    expect(validateItems(schema, items)).toEqual([]);
  });

  it('names every problem with the item index and field', () => {
    const problems = validateItems(schema, [
      { itemType: 'journalArticle', title: 'ok' },
      {
        itemType: 'bookSection',
        publicationTitle: 'B',
        foo: 'x',
        creators: [{ creatorType: 'painter', name: 'P' }],
      },
      { itemType: 'journalarticle' },
      { title: 'no type' },
      { itemType: 'book', title: 3, tags: ['x'], collections: ['nope'], parentItem: 'ABCD2345', version: 5 },
      'not an object',
    ]);
    const where = problems.map((p) => `${p.index}:${p.field}`);
    expect(where).toEqual([
      '1:publicationTitle',
      '1:foo',
      '1:creators[0].creatorType',
      '2:itemType',
      '3:itemType',
      '4:title',
      '4:tags[0]',
      '4:collections[0]',
      '4:parentItem',
      '4:version',
      '5:(item)',
    ]);
    expect(problems[0]?.message).toContain("use 'bookTitle'");
    expect(problems[3]?.message).toContain("did you mean 'journalArticle'");
  });

  it('refuses the batch with validation_error listing every problem in error.failed', () => {
    try {
      checkedItems(schema, [
        { itemType: 'book', title: 'ok' },
        { itemType: 'book', nope: '1', also: '2' },
      ]);
      expect.unreachable();
    } catch (error) {
      expect(isZoteusError(error) && error.code).toBe('validation_error');
      const body = (error as { toJSON(): Record<string, unknown> }).toJSON();
      expect(body.field).toBe('items');
      expect(body.message).toContain('items[1].nope');
      expect(body.message).toContain('items[1].also');
      expect(body.failed).toEqual([
        {
          index: 1,
          field: 'nope',
          code: 400,
          message: "'nope' is not a field of book",
          reason: 'validation_error',
        },
        {
          index: 1,
          field: 'also',
          code: 400,
          message: "'also' is not a field of book",
          reason: 'validation_error',
        },
      ]);
    }
  });

  it('unwraps the Web API object wrapper', () => {
    const items = checkedItems(schema, [
      { key: 'ABCD2345', version: 3, data: { itemType: 'book', title: 'T' } },
    ]);
    expect(items).toEqual([{ itemType: 'book', title: 'T' }]);
  });
});

describe('refreshing the schema from /schema', () => {
  let server: Server;
  let url = '';
  let requests: Array<{ path: string; ifNoneMatch: string | undefined }> = [];
  let answer: 'schema' | '404' = 'schema';
  let served: Record<string, unknown>;
  let box: ReturnType<typeof sandbox>;

  beforeEach(async () => {
    box = sandbox();
    requests = [];
    answer = 'schema';
    served = { ...(JSON.parse(readFileSync(BUNDLED_SCHEMA_PATH, 'utf8')) as Record<string, unknown>) };
    served.version = (served.version as number) + 1;
    server = createServer((req, res) => {
      const inm = req.headers['if-none-match'];
      requests.push({ path: req.url ?? '', ifNoneMatch: typeof inm === 'string' ? inm : undefined });
      if (answer === '404' || req.url !== '/schema') {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found');
        return;
      }
      if (inm === '"v-next"') {
        res.writeHead(304, { ETag: '"v-next"' }).end();
        return;
      }
      res
        .writeHead(200, { 'Content-Type': 'application/json', ETag: '"v-next"' })
        .end(JSON.stringify(served));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    box.cleanup();
  });

  const depsAt = (clock: ReturnType<typeof movableClock>) => {
    const env = { ...box.env, ZOTERO_API_URL: url };
    const config = loadConfig(env);
    return { deps: createDeps({ config, env, version: CLI_VERSION, surface: 'cli', clock }), config };
  };

  it('fetches once, caches on disk with the ETag, revalidates with If-None-Match after a day', async () => {
    const clock = movableClock(1_000_000);
    const first = depsAt(clock);
    const client = createZoteroClient({ apiUrl: url, clock });
    const schema = await onlineSchema(first.deps, client);
    expect(schema.source).toBe('server');
    expect(schema.version).toBe(served.version);
    expect(requests).toEqual([{ path: '/schema', ifNoneMatch: undefined }]);
    // Offline readers now see the newer cached copy.
    expect(localSchema(first.config).version).toBe(served.version);
    expect(JSON.parse(readFileSync(schemaCachePath(first.config), 'utf8'))).toMatchObject({
      etag: '"v-next"',
    });

    // Another invocation within the day: no request.
    clock.advance(SCHEMA_TTL_MS - 1000);
    expect((await onlineSchema(depsAt(clock).deps, client)).version).toBe(served.version);
    expect(requests).toHaveLength(1);

    // After the day: one conditional request, answered 304.
    clock.advance(2000);
    const again = await onlineSchema(depsAt(clock).deps, client);
    expect(again.version).toBe(served.version);
    expect(again.source).toBe('cache');
    expect(requests).toEqual([
      { path: '/schema', ifNoneMatch: undefined },
      { path: '/schema', ifNoneMatch: '"v-next"' },
    ]);
  });

  it('a server without /schema: falls back to the bundled copy and waits an hour before asking again', async () => {
    answer = '404';
    const clock = movableClock(5_000_000);
    const client = createZoteroClient({ apiUrl: url, clock });
    const schema = await onlineSchema(depsAt(clock).deps, client);
    expect(schema.source).toBe('bundled');
    expect(requests).toHaveLength(1);
    clock.advance(SCHEMA_RETRY_MS - 1000);
    await onlineSchema(depsAt(clock).deps, client);
    expect(requests).toHaveLength(1);
    clock.advance(2000);
    answer = 'schema';
    expect((await onlineSchema(depsAt(clock).deps, client)).source).toBe('server');
    expect(requests).toHaveLength(2);
  });

  it('one deps asks at most once, however many callers', async () => {
    const clock = movableClock(9_000_000);
    const { deps } = depsAt(clock);
    const client = createZoteroClient({ apiUrl: url, clock });
    await Promise.all([onlineSchema(deps, client), onlineSchema(deps, client), onlineSchema(deps, client)]);
    await onlineSchema(deps, client);
    expect(requests).toHaveLength(1);
  });
});
