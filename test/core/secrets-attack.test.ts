/**
 * The secret sweep: every client that talks to a remote server (the Zotero client, the
 * embeddings client, the metadata resolvers), and the built CLI, against a loopback server that
 * quotes a key just past where messages cut bodies, echoes request headers back, and redirects
 * to another port that records what it receives. No 8-character run of a configured key may
 * reach an error message, a log line or the CLI's output, and no credential header may reach
 * the other port. The keys have hyphens, as an independent server's keys do.
 *
 * The CLI part runs bin/zot as a subprocess: `npm run build` first.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { createDeps } from '../../src/core/deps.js';
import { ZoteusError } from '../../src/core/errors.js';
import { resolveArxiv, resolveDoi, resolverSettings } from '../../src/core/items/resolvers.js';
import { localSchema } from '../../src/core/items/schema.js';
import { configSecrets, createRedactor } from '../../src/core/redact.js';
import { createEmbedder } from '../../src/core/search-index/embeddings.js';
import { CLI_VERSION } from '../../src/core/version.js';
import { createZoteroClient } from '../../src/core/zotero/index.js';
import { runZot, sandbox } from '../support/cli.js';
import {
  CREDENTIAL_HEADER_NAMES,
  leakedRuns,
  startHostileServer,
  type HostileServer,
  type Mode,
} from './http/hostile-server.js';
import { errorTexts, fakeClock } from './zotero/helpers.js';

const ZOTERO_KEY = 'zt-Q7wX-9pLm-R4vK-2nBd-H8sJ';
const EMBEDDINGS_KEY = 'sk-test-Vq3N-88xLp-Wz41-Tb6R-mE0c';
const KEYS = [ZOTERO_KEY, EMBEDDINGS_KEY];

let server: HostileServer;
let lines: string[];
let errors: unknown[];
beforeAll(async () => {
  server = await startHostileServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.received.length = 0;
  server.otherReceived.length = 0;
  lines = [];
  errors = [];
});

/** Runs `promise`, keeping what it threw (or nothing) for the sweep. */
async function attempt(promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise;
  } catch (error) {
    errors.push(error);
    return error;
  }
}

/** Every text the attempts produced: error texts (message, hint, JSON, stack) and log lines. */
function produced(): string {
  const texts = errors.map((e) => (e instanceof ZoteusError ? errorTexts(e) : String(e)));
  return [...texts, ...lines, JSON.stringify(errors)].join('\n');
}

function expectNoLeak(text: string): void {
  for (const key of KEYS) expect(leakedRuns(text, key), `a run of ${key} leaked`).toEqual([]);
}

function expectNoCredentialsForwarded(): void {
  for (const request of server.otherReceived) {
    for (const name of CREDENTIAL_HEADER_NAMES) expect(request.headers[name]).toBeUndefined();
  }
}

/** The scenarios every client meets; each quotes both keys, so neither secret is special. */
const SCENARIOS: Array<{ name: string; set: Parameters<HostileServer['set']>[0] }> = [
  ...KEYS.map((secret) => ({
    name: `an error body of 177 characters, then the ${secret === ZOTERO_KEY ? 'Zotero' : 'embeddings'} key`,
    set: { mode: 'cut' as Mode, status: 400, secret },
  })),
  ...KEYS.map((secret) => ({
    name: `a 500 whose body cuts the ${secret === ZOTERO_KEY ? 'Zotero' : 'embeddings'} key`,
    set: { mode: 'cut' as Mode, status: 500, secret },
  })),
  {
    // Whole-key matching misses a fragment: only the 8-character-run rule catches it.
    name: 'an error body quoting 12 characters from the middle of each key',
    set: { mode: 'cut', status: 400, secret: `${ZOTERO_KEY.slice(4, 16)} ${EMBEDDINGS_KEY.slice(6, 18)}` },
  },
  { name: 'an error body echoing the request headers', set: { mode: 'echo', status: 400 } },
  { name: 'a 403 echoing the request headers', set: { mode: 'echo', status: 403 } },
  { name: 'a 302 to another port', set: { mode: 'redirect', redirectStatus: 302 } },
  { name: 'a 307 to another port', set: { mode: 'redirect', redirectStatus: 307 } },
  {
    name: 'a 302 to another port, whose Location quotes the key',
    set: { mode: 'redirect', redirectStatus: 302, location: `/moved/${ZOTERO_KEY}?e=${EMBEDDINGS_KEY}` },
  },
];

describe('the Zotero client', () => {
  it.each(SCENARIOS)('$name', async ({ set }) => {
    // The Location of the third redirect scenario is on this server: point it at the other one.
    server.set(set.location ? { ...set, location: `${server.otherUrl}${set.location}` } : set);
    const client = createZoteroClient({
      apiUrl: server.url,
      apiKey: ZOTERO_KEY,
      clock: fakeClock(),
      log: (line) => lines.push(line),
      redact: createRedactor([EMBEDDINGS_KEY]),
      random: () => 0.5,
    });
    await attempt(client.getKeyInfo());
    await attempt(client.request('GET', '/users/1/items', { query: { limit: 1 } }));
    await attempt(client.listAll('/users/1/collections'));
    await attempt(client.writeBatch('users/1', 'items', [{ key: 'ABCD2345', version: 1, title: 'x' }]));
    expect(server.received.length).toBeGreaterThanOrEqual(4);
    expect(server.received[0]?.headers['zotero-api-key']).toBe(ZOTERO_KEY);
    expect(errors.length + lines.length).toBeGreaterThan(0);
    expectNoLeak(produced());
    expectNoCredentialsForwarded();
    // A write is never sent on to another origin, whatever the redirect.
    expect(server.otherReceived.filter((r) => r.method !== 'GET')).toEqual([]);
  });
});

describe('the embeddings client', () => {
  it.each(SCENARIOS)('$name', async ({ set }) => {
    server.set(set.location ? { ...set, location: `${server.otherUrl}${set.location}` } : set);
    const env = {
      HOME: '/nonexistent',
      ZOT_CONFIG_DIR: '/nonexistent',
      ZOTERO_API_KEY: ZOTERO_KEY,
      ZOTEUS_EMBEDDINGS: 'openai',
      ZOTEUS_EMBEDDINGS_URL: `${server.url}/v1`,
      ZOTEUS_EMBEDDINGS_API_KEY: EMBEDDINGS_KEY,
    };
    const config = loadConfig(env);
    const embedder = createEmbedder(config, {
      clock: fakeClock(),
      random: () => 0.5,
      redact: createRedactor(configSecrets(config)),
      log: { debug: (line) => lines.push(line), warn: (line) => lines.push(line) },
    });
    await attempt(embedder!.embed(['one text', 'another']));
    expect(server.received[0]?.headers.authorization).toBe(`Bearer ${EMBEDDINGS_KEY}`);
    expect(errors).toHaveLength(1);
    expectNoLeak(produced());
    expectNoCredentialsForwarded();
    // Its POST carries library text: never sent on to another origin.
    expect(server.otherReceived).toEqual([]);
  });
});

describe('the metadata resolvers', () => {
  const schema = localSchema({ cacheDir: '/nonexistent', apiUrl: 'http://127.0.0.1:9' });

  it.each(SCENARIOS)('$name', async ({ set }) => {
    server.set(set.location ? { ...set, location: `${server.otherUrl}${set.location}` } : set);
    const box = sandbox();
    try {
      const env = {
        ...box.env,
        ZOTERO_API_KEY: ZOTERO_KEY,
        ZOTEUS_EMBEDDINGS_API_KEY: EMBEDDINGS_KEY,
        ZOTEUS_CROSSREF_URL: `${server.url}/crossref`,
        ZOTEUS_DATACITE_URL: `${server.url}/datacite`,
        ZOTEUS_ARXIV_URL: `${server.url}/arxiv`,
      };
      const deps = createDeps({
        config: loadConfig(env),
        env,
        version: CLI_VERSION,
        surface: 'cli',
        clock: fakeClock(),
        debug: true,
        writeLog: (line) => lines.push(line),
      });
      const settings = resolverSettings(deps);
      await attempt(resolveDoi(deps, settings, schema, '10.1234/abc'));
      const arxiv = await resolveArxiv(deps, settings, schema, ['2101.00001']);
      errors.push(...arxiv.values());
    } finally {
      box.cleanup();
    }
    expect(server.received.length).toBeGreaterThanOrEqual(3);
    expect(lines.length).toBeGreaterThan(0);
    expectNoLeak(produced());
    expectNoCredentialsForwarded();
  });
});

describe('the CLI', () => {
  let box: ReturnType<typeof sandbox>;
  beforeAll(() => {
    box = sandbox();
  });
  afterAll(() => box.cleanup());

  const zot = (args: string[], extra: Record<string, string> = {}) =>
    runZot(args, {
      env: {
        ...box.env,
        ZOTERO_API_URL: server.url,
        ZOTERO_API_KEY: ZOTERO_KEY,
        ZOTEUS_EMBEDDINGS_API_KEY: EMBEDDINGS_KEY,
        ZOTEUS_LOCAL: 'off',
        ...extra,
      },
    });

  const CLI_SCENARIOS = [
    ...SCENARIOS.map((s) => ({ ...s, keyCheck: false })),
    // Past the key check (whose answer quotes the key, as zotero.org's does) to the listing.
    ...SCENARIOS.map((s) => ({ ...s, name: `${s.name}, after the key check`, keyCheck: true })),
  ];

  it.each(CLI_SCENARIOS)('zot groups: $name', async ({ set, keyCheck }) => {
    server.set({
      ...(set.location ? { ...set, location: `${server.otherUrl}${set.location}` } : set),
      ...(keyCheck ? { keyCheck: { key: ZOTERO_KEY, userID: 7 } } : {}),
    });
    for (const format of ['json', 'table']) {
      const r = await zot(['groups'], {
        ZOT_FORMAT: format,
        ZOT_CACHE_DIR: join(box.dir, `cache-${format}`),
      });
      expect(r.code, r.stdout + r.stderr).not.toBe(0);
      expect(`${r.stdout}${r.stderr}`).not.toMatch(/ZOTERO_API_KEY is (too|malformed)/);
      expectNoLeak(r.stdout + r.stderr);
    }
    expect(server.received.length).toBeGreaterThan(0);
    expectNoCredentialsForwarded();
  });

  it('a config.json that is not JSON is reported by line and column, without the key it holds', async () => {
    const dir = join(box.dir, 'broken-config');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'config.json'),
      `{\n  "profiles": {\n    "default": { "api_key": ${ZOTERO_KEY}, "library_id": 1 }\n  }\n}\n`,
    );
    const r = await runZot(['groups'], {
      env: { ...box.env, ZOT_CONFIG_DIR: dir, ZOTERO_API_URL: server.url },
    });
    expect(r.code).toBe(3);
    expect(r.stdout + r.stderr).toMatch(/is not valid JSON \(line 3, column 29\)/);
    expectNoLeak(r.stdout + r.stderr);
  });
});
