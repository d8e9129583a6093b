/**
 * A tenant's files on a shared deployment (sign-in, PostgreSQL): what a tenant saves is written
 * under their own folder and served back to them only, as the MCP resource the save's result
 * names (zotero://files/…); the same URI from another tenant reads that tenant's own folder;
 * `..`, absolute paths and symlinks out of the folder are refused; a save past the quota
 * (ZOTEUS_TENANT_QUOTA_MB) is refused with what is used and free, and writes nothing; a plan
 * made for apply is the tenant's row in the state database.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMcp } from '../../../src/surfaces/mcp/run.js';
import { postgresUrl } from '../../support/postgres.js';
import { startZoteroOAuthServer, type ZoteroOAuthFake } from '../../support/zotero-oauth-server.js';
import { startZoteroServer, type ZoteroTestServer } from '../../support/zotero-server/index.js';
import { REDIRECT_URI, browse } from './auth/world.js';
import { isolatedEnv } from './harness.js';

const KEY_ADA = 'AdaKey0000000000000000A1';
const KEY_BOB = 'BobKey0000000000000000B2';
const SECRET = randomBytes(32).toString('base64');

let zotero: ZoteroTestServer;
let oauth: ZoteroOAuthFake;
let databaseUrl: string;
let base: string;
let stop: AbortController;
let running: Promise<number>;
const stderr: string[] = [];
let dataDir: string;
let mergeKeys: string[];

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  zotero = await startZoteroServer();
  for (const [id, name, key] of [
    [101, 'ada', KEY_ADA],
    [202, 'bob', KEY_BOB],
  ] as const) {
    zotero.addUser({ userID: id, username: name });
    zotero.addKey({ key, userID: id, access: { user: { library: true, notes: true, write: true } } });
  }
  zotero.library('users/101').addItems([{ title: 'Ada only: analytical engines' }]);
  zotero.library('users/202').addItems([{ title: 'Bob only: bridges' }]);
  mergeKeys = zotero.library('users/101').addItems([{ title: 'Twice' }, { title: 'Twice' }]);
  oauth = await startZoteroOAuthServer();
  databaseUrl = await postgresUrl();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const err = new PassThrough();
  err.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  stop = new AbortController();
  const env = isolatedEnv({
    ...oauth.env(),
    ZOTERO_API_URL: zotero.url,
    ZOTEUS_AUTH: 'zotero',
    ZOTEUS_SECRET_KEYS: SECRET,
    ZOTEUS_DATABASE_URL: databaseUrl,
    // 0.05 MB: 52,428 bytes.
    ZOTEUS_TENANT_QUOTA_MB: '0.05',
  });
  dataDir = env.ZOTEUS_DATA_DIR!;
  running = runMcp({
    env,
    http: true,
    port,
    publicUrl: base,
    stderr: err,
    signal: stop.signal,
  });
  // Listening once the metadata answers.
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`${base}/.well-known/oauth-protected-resource`).catch(() => undefined);
    if (up?.ok) break;
    await new Promise((r) => setTimeout(r, 50));
  }
});

afterAll(async () => {
  stop.abort();
  expect(await running).toBe(0);
  await oauth.close();
  await zotero.close();
});

/** Signs a person in (registration, PKCE, Zotero, the code) and returns an access token. */
async function signIn(user: { userID: number; username: string; apiKey: string }) {
  oauth.user = user;
  const registered = await fetch(`${base}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test client',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
    }),
  });
  const { client_id } = (await registered.json()) as { client_id: string };
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${base}/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id,
    redirect_uri: REDIRECT_URI,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    resource: `${base}/mcp`,
    scope: 'zotero:read zotero:write',
    state: 's',
  }))
    authorize.searchParams.set(k, v);
  const back = await browse(authorize.href, {});
  const token = await fetch(`${base}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') ?? '',
      code_verifier: verifier,
      client_id,
      redirect_uri: REDIRECT_URI,
      resource: `${base}/mcp`,
    }).toString(),
  });
  expect(token.status).toBe(200);
  return ((await token.json()) as { access_token: string }).access_token;
}

async function clientWith(token: string): Promise<Client> {
  const client = new Client({ name: 'tenant-files-test', version: '0.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

const textOf = (result: unknown) =>
  (result as { content: Array<{ type: string; text: string }> }).content.map((c) => c.text).join('\n');
const dataOf = (result: unknown) =>
  (result as { structuredContent: Record<string, unknown> }).structuredContent;

const row = (finding: string) => ({
  item_key: 'ABCD2345',
  study: 'Smith 2020',
  finding,
  coverage: 'abstract-only',
  support: 'unverified',
});

/** The folder of a tenant's files: the one under callers/ holding `file`. */
function folderWith(file: string): string {
  const callers = join(dataDir, 'callers');
  const found = readdirSync(callers).filter((name) => existsSync(join(callers, name, file)));
  expect(found).toHaveLength(1);
  return join(callers, found[0]!);
}

async function refusalOf(client: Client, uri: string): Promise<{ message: string; code: unknown }> {
  try {
    await client.readResource({ uri });
  } catch (error) {
    const { message, data } = error as { message: string; data?: Record<string, unknown> };
    return { message, code: (data?._zoteus as { code?: unknown } | undefined)?.code ?? data };
  }
  throw new Error(`${uri} was read`);
}

describe("a tenant's files on a shared deployment", () => {
  let ada: Client;
  let bob: Client;
  beforeAll(async () => {
    ada = await clientWith(await signIn({ userID: 101, username: 'ada', apiKey: KEY_ADA }));
    bob = await clientWith(await signIn({ userID: 202, username: 'bob', apiKey: KEY_BOB }));
  });
  afterAll(async () => {
    await ada.close();
    await bob.close();
  });

  it('the template is listed', async () => {
    const { resourceTemplates } = await ada.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('zotero://files/{path}');
  });

  it('a saved table names its resource, which reads it back to its owner only', async () => {
    const saved = await ada.callTool({
      name: 'zotero_evidence_table',
      arguments: { question: 'Does it help?', rows: [row('Ada: it helps.')], save_path: 'tables/ev one.md' },
    });
    expect(saved.isError ?? false).toBe(false);
    const out = dataOf(saved);
    expect(out.resource).toBe('zotero://files/tables/ev%20one.md');
    const read = await ada.readResource({ uri: out.resource as string });
    expect(read.contents).toEqual([
      { uri: 'zotero://files/tables/ev%20one.md', mimeType: 'text/markdown', text: out.table },
    ]);

    // Bob has no such file: the same URI reads his own folder, where there is none.
    const refused = await refusalOf(bob, 'zotero://files/tables/ev%20one.md');
    expect(refused.message).toContain('not_found: You have no saved file tables/ev one.md.');
    expect(refused.message).not.toContain('Ada');

    // Once Bob saves at the same path, each reads their own.
    await bob.callTool({
      name: 'zotero_evidence_table',
      arguments: { question: 'Q', rows: [row('Bob: it does not.')], save_path: 'tables/ev one.md' },
    });
    const text = async (c: Client) =>
      ((await c.readResource({ uri: 'zotero://files/tables/ev%20one.md' })).contents[0] as { text: string })
        .text;
    expect(await text(ada)).toContain('Ada: it helps.');
    expect(await text(ada)).not.toContain('Bob');
    expect(await text(bob)).toContain('Bob: it does not.');
    expect(await text(bob)).not.toContain('Ada');
  });

  it('refuses "..", "~", an absolute path and a symlink out of the folder, and serves no state file', async () => {
    await ada.callTool({
      name: 'zotero_evidence_table',
      arguments: { question: 'Q', rows: [row('x')], save_path: 'probe.md' },
    });
    const folder = folderWith('probe.md');
    const outside = join(dataDir, 'secret.txt');
    writeFileSync(outside, 'the server’s own secret');
    symlinkSync(outside, join(folder, 'link.txt'));
    mkdirSync(join(folder, 'plans'), { recursive: true });
    writeFileSync(join(folder, 'plans', 'p_aaaaaaaaaaaaaaaa.json'), '{}');
    const cases: [string, string][] = [
      ['zotero://files/..%2Fsecret.txt', 'permission_denied: path may not contain ".."'],
      ['zotero://files/tables/../../secret.txt', 'permission_denied: path may not contain ".."'],
      ['zotero://files/~%2F.ssh%2Fid_rsa', 'permission_denied: path may not use "~"'],
      [`zotero://files/${encodeURIComponent(outside)}`, 'permission_denied: path is outside your own folder'],
      ['zotero://files/link.txt', 'permission_denied: link.txt leads outside your own folder'],
      ['zotero://files/plans/p_aaaaaaaaaaaaaaaa.json', 'not_found: You have no saved file'],
    ];
    for (const [uri, says] of cases) {
      const refused = await refusalOf(ada, uri);
      expect(refused.message, uri).toContain(says);
      expect(refused.message).not.toContain('secret’');
    }
  });

  it('text as text, other bytes as a blob, and a file past the bound refused with its size', async () => {
    await ada.callTool({
      name: 'zotero_evidence_table',
      arguments: { question: 'Q', rows: [row('y')], save_path: 'probe2.md' },
    });
    const folder = folderWith('probe2.md');
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
    writeFileSync(join(folder, 'figure.png'), png);
    writeFileSync(join(folder, 'big.md'), 'a'.repeat(100_001));
    const blob = await ada.readResource({ uri: 'zotero://files/figure.png' });
    expect(blob.contents).toEqual([
      { uri: 'zotero://files/figure.png', mimeType: 'image/png', blob: png.toString('base64') },
    ]);
    const big = await refusalOf(ada, 'zotero://files/big.md');
    expect(big.message).toContain(
      'validation_error: big.md is 100,001 bytes, more than a resource embeds (100,000 bytes).',
    );
    const folderItself = await refusalOf(ada, 'zotero://files/tables');
    expect(folderItself.message).toContain('validation_error: tables is a folder; name a file in it.');
  });

  it('a save past the quota is refused with what is used and free, and writes nothing', async () => {
    // Bob's folder: one small table so far. A 30,000-byte finding fits once, not twice.
    const first = await bob.callTool({
      name: 'zotero_evidence_table',
      arguments: { question: 'Q', rows: [row('b'.repeat(30_000))], save_path: 'big/one.md' },
    });
    expect(first.isError ?? false).toBe(false);
    const folder = folderWith('big/one.md');
    const before = readdirSync(join(folder, 'big'));
    const second = await bob.callTool({
      name: 'zotero_evidence_table',
      arguments: { question: 'Q', rows: [row('c'.repeat(30_000))], save_path: 'big/two.md' },
    });
    expect(second.isError).toBe(true);
    const said =
      /This file \(([\d,]+) bytes\) would pass your quota of 52,428 bytes on this shared server: ([\d,]+) bytes used, ([\d,]+) bytes free\. Nothing was written\./.exec(
        textOf(second),
      );
    expect(textOf(second)).toContain('validation_error: ');
    const [size, used, free] = (said ?? []).slice(1).map((n) => Number(n.replaceAll(',', '')));
    // What is used: Bob's two tables, as on disk.
    const onDisk = ['tables/ev one.md', 'big/one.md'].reduce(
      (sum, f) => sum + statSync(join(folder, f)).size,
      0,
    );
    expect(used).toBe(onDisk);
    expect(free).toBe(52_428 - onDisk);
    expect(size).toBeGreaterThan(free!);
    expect(readdirSync(join(folder, 'big'))).toEqual(before);
    expect(existsSync(join(folder, 'big', 'two.md'))).toBe(false);
    // Replacing the file gives its room back.
    const replaced = await bob.callTool({
      name: 'zotero_evidence_table',
      arguments: { question: 'Q', rows: [row('d'.repeat(30_000))], save_path: 'big/one.md', overwrite: true },
    });
    expect(replaced.isError ?? false).toBe(false);
    expect(readFileSync(join(folder, 'big', 'one.md'), 'utf8')).toContain('ddd');
  });

  it('a plan awaiting apply is the tenant’s row in the state database; another tenant cannot apply it', async () => {
    const [master, other] = mergeKeys as [string, string];
    const preview = await ada.callTool({
      name: 'zotero_merge_items',
      arguments: { master_key: master, item_keys: [other] },
    });
    expect(preview.isError ?? false).toBe(false);
    const planId = dataOf(preview).planId as string;
    const db = new pg.Client(databaseUrl);
    await db.connect();
    const rows = await db.query('SELECT owner, kind, library FROM plans WHERE id = $1', [planId]);
    await db.end();
    expect(rows.rows).toEqual([{ owner: 'tenant:101', kind: expect.any(String), library: 'users/101' }]);
    // Nothing of it is on this replica's disk.
    const callers = join(dataDir, 'callers');
    const onDisk = readdirSync(callers).filter((name) =>
      existsSync(join(callers, name, 'plans', `${planId}.json`)),
    );
    expect(onDisk).toEqual([]);
    const stolen = await bob.callTool({
      name: 'zotero_merge_items',
      arguments: { master_key: master, item_keys: [other], apply: true, plan_id: planId },
    });
    expect(stolen.isError).toBe(true);
    const applied = await ada.callTool({
      name: 'zotero_merge_items',
      arguments: { master_key: master, item_keys: [other], apply: true, plan_id: planId },
    });
    expect(applied.isError ?? false).toBe(false);
    expect(dataOf(applied)).toMatchObject({ applied: true });
  });
});
