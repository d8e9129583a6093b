/**
 * A tenant's files on a shared deployment of two replicas on one PostgreSQL (sign-in): what a
 * tenant saves through one replica is kept in the state database (tenant_files), nothing on
 * either replica's disk, and served back through the other to its owner only, as the MCP
 * resource the save's result names (zotero://files/…); the same URI from another tenant reads
 * that tenant's own files; `..`, `~` and absolute paths are refused; a save past the quota
 * (ZOTEUS_TENANT_QUOTA_MB, counted from the database) is refused with what is used and free,
 * and writes nothing; a plan made for apply is the tenant's row in the state database.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresClient, type SqlClient } from '../../../src/core/store/sql.js';
import { sqlTenantFileStore } from '../../../src/core/store/tenant-files.js';
import { runMcp } from '../../../src/surfaces/mcp/run.js';
import { postgresUrl } from '../../support/postgres.js';
import { startZoteroOAuthServer, type ZoteroOAuthFake } from '../../support/zotero-oauth-server.js';
import { startZoteroServer, type ZoteroTestServer } from '../../support/zotero-server/index.js';
import { isolatedEnv } from './harness.js';
import { clientWith as clientAt, signIn as signInAt, textOf } from './signed-in.js';
import { freePort, waitUntilUp } from '../../support/free-port.js';

const KEY_ADA = 'AdaKey0000000000000000A1';
const KEY_BOB = 'BobKey0000000000000000B2';
const SECRET = randomBytes(32).toString('base64');

let zotero: ZoteroTestServer;
let oauth: ZoteroOAuthFake;
let databaseUrl: string;
let db: SqlClient;
/** The public URL both replicas answer for (a load balancer's), here replica A's address. */
let base: string;
const replicas: Array<{ url: string; dataDir: string; stop: AbortController; running: Promise<number> }> = [];
const stderr: string[] = [];
let mergeKeys: string[];

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
  const ports = [await freePort(), await freePort()];
  base = `http://127.0.0.1:${ports[0]}`;
  for (const port of ports) {
    const err = new PassThrough();
    err.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const stop = new AbortController();
    // Each replica its own data directory: nothing of a tenant's may need the other's disk.
    const env = isolatedEnv({
      ...oauth.env(),
      ZOTERO_API_URL: zotero.url,
      ZOTEUS_AUTH: 'zotero',
      ZOTEUS_SECRET_KEYS: SECRET,
      ZOTEUS_DATABASE_URL: databaseUrl,
      // 0.05 MB: 52,428 bytes.
      ZOTEUS_TENANT_QUOTA_MB: '0.05',
    });
    const running = runMcp({ env, http: true, port, publicUrl: base, stderr: err, signal: stop.signal });
    replicas.push({ url: `http://127.0.0.1:${port}`, dataDir: env.ZOTEUS_DATA_DIR!, stop, running });
    // Ready once migrated.
    await waitUntilUp(`http://127.0.0.1:${port}/readyz`);
  }
  db = await openPostgresClient(databaseUrl, { max: 2 });
});

afterAll(async () => {
  for (const replica of replicas) replica.stop.abort();
  for (const replica of replicas) expect(await replica.running).toBe(0);
  await db.close();
  await oauth.close();
  await zotero.close();
});

const signIn = (user: { userID: number; username: string; apiKey: string }) => signInAt(base, oauth, user);
/** A client of replica 0 (A) or 1 (B). */
const clientOn = (replica: 0 | 1, token: string) => clientAt(`${replicas[replica]!.url}/mcp`, token);

const dataOf = (result: unknown) =>
  (result as { structuredContent: Record<string, unknown> }).structuredContent;

const row = (finding: string) => ({
  item_key: 'ABCD2345',
  study: 'Smith 2020',
  finding,
  coverage: 'abstract-only',
  support: 'unverified',
});

/** Every file under either replica's callers/ folder: a tenant's saves leave none. */
function filesOnDisk(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else found.push(path);
    }
  };
  for (const { dataDir } of replicas) {
    const callers = join(dataDir, 'callers');
    if (existsSync(callers)) walk(callers);
  }
  return found;
}

/** The sizes of a tenant's rows of tenant_files, by path. */
async function rowsOf(owner: string): Promise<Record<string, number>> {
  const rows = await db.query<{ path: string; size: number }>(
    'SELECT path, size FROM tenant_files WHERE owner = ? ORDER BY path',
    [owner],
  );
  return Object.fromEntries(rows.map((r) => [r.path, Number(r.size)]));
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

describe("a tenant's files on a shared deployment of two replicas", () => {
  /** Ada and Bob, each with a client of replica A and one of replica B. */
  let ada: [Client, Client];
  let bob: [Client, Client];
  let adaToken: string;
  let bobToken: string;
  beforeAll(async () => {
    adaToken = await signIn({ userID: 101, username: 'ada', apiKey: KEY_ADA });
    bobToken = await signIn({ userID: 202, username: 'bob', apiKey: KEY_BOB });
    ada = [await clientOn(0, adaToken), await clientOn(1, adaToken)];
    bob = [await clientOn(0, bobToken), await clientOn(1, bobToken)];
  });
  afterAll(async () => {
    for (const client of [...ada, ...bob]) await client.close();
  });

  it('the template is listed', async () => {
    const { resourceTemplates } = await ada[1].listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('zotero://files/{path}');
  });

  it('a table saved through replica A is read through replica B, by its owner only, and is on neither disk', async () => {
    const saved = await ada[0].callTool({
      name: 'zotero_evidence_table',
      arguments: { question: 'Does it help?', rows: [row('Ada: it helps.')], save_path: 'tables/ev one.md' },
    });
    expect(saved.isError ?? false).toBe(false);
    const out = dataOf(saved);
    expect(out.resource).toBe('zotero://files/tables/ev%20one.md');
    const read = await ada[1].readResource({ uri: out.resource as string });
    expect(read.contents).toEqual([
      { uri: 'zotero://files/tables/ev%20one.md', mimeType: 'text/markdown', text: out.table },
    ]);
    expect(await rowsOf('tenant:101')).toEqual({
      'tables/ev one.md': Buffer.byteLength(out.table as string),
    });
    expect(filesOnDisk()).toEqual([]);

    // Bob has no such file, through either replica: the same URI reads his own files.
    for (const client of bob) {
      const refused = await refusalOf(client, 'zotero://files/tables/ev%20one.md');
      expect(refused.message).toContain('not_found: You have no saved file tables/ev one.md.');
      expect(refused.message).not.toContain('Ada');
    }

    // Once Bob saves at the same path (through B), each reads their own, through either replica.
    const his = await bob[1].callTool({
      name: 'zotero_evidence_table',
      arguments: { question: 'Q', rows: [row('Bob: it does not.')], save_path: 'tables/ev one.md' },
    });
    expect(his.isError ?? false).toBe(false);
    const text = async (c: Client) =>
      ((await c.readResource({ uri: 'zotero://files/tables/ev%20one.md' })).contents[0] as { text: string })
        .text;
    for (const i of [0, 1] as const) {
      expect(await text(ada[i])).toContain('Ada: it helps.');
      expect(await text(ada[i])).not.toContain('Bob');
      expect(await text(bob[i])).toContain('Bob: it does not.');
      expect(await text(bob[i])).not.toContain('Ada');
    }
    // Saving again through the other replica without overwrite: the file exists there too.
    const again = await ada[1].callTool({
      name: 'zotero_evidence_table',
      arguments: { question: 'Q', rows: [row('Ada: again.')], save_path: 'tables/ev one.md' },
    });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatch(/conflict: .*tables\/ev one\.md already exists; it was left untouched\./);
    expect(await text(ada[0])).toContain('Ada: it helps.');
    expect(filesOnDisk()).toEqual([]);
  });

  it('an export streamed through replica B is read through replica A', async () => {
    const exported = await ada[1].callTool({
      name: 'zotero_export',
      arguments: { all: true, format: 'bibtex', save_path: 'refs/all.bib' },
    });
    expect(exported.isError ?? false).toBe(false);
    const saved = dataOf(exported).saved as { resource: string };
    expect(saved.resource).toBe('zotero://files/refs/all.bib');
    const read = await ada[0].readResource({ uri: saved.resource });
    expect(read.contents).toEqual([
      {
        uri: 'zotero://files/refs/all.bib',
        mimeType: 'application/x-bibtex',
        text: expect.stringContaining('analytical engines'),
      },
    ]);
    expect((read.contents[0] as { text: string }).text).not.toContain('Bob only');
    expect((await rowsOf('tenant:101'))['refs/all.bib']).toBe(
      Buffer.byteLength((read.contents[0] as { text: string }).text),
    );
    expect(await refusalOf(bob[0], 'zotero://files/refs/all.bib')).toMatchObject({
      message: expect.stringContaining('not_found: You have no saved file refs/all.bib.'),
    });
    expect(filesOnDisk()).toEqual([]);
  });

  it('refuses "..", "~" and an absolute path, and a folder, in the words of a save', async () => {
    const outside = join(replicas[0]!.dataDir, 'secret.txt');
    const cases: [string, string][] = [
      ['zotero://files/..%2Fsecret.txt', 'permission_denied: path may not contain ".."'],
      ['zotero://files/tables/../../secret.txt', 'permission_denied: path may not contain ".."'],
      ['zotero://files/~%2F.ssh%2Fid_rsa', 'permission_denied: path may not use "~"'],
      [`zotero://files/${encodeURIComponent(outside)}`, 'permission_denied: path is outside your own folder'],
      ['zotero://files/tables', 'validation_error: tables is a folder; name a file in it.'],
    ];
    for (const [uri, says] of cases) {
      const refused = await refusalOf(ada[1], uri);
      expect(refused.message, uri).toContain(says);
    }
  });

  it('text as text, other bytes as a blob, and a file past the bound refused with its size', async () => {
    // Files as a download would leave them: put straight into Ada's rows.
    const store = sqlTenantFileStore(db, 'tenant:101');
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
    const big = 'a'.repeat(100_001);
    const room = { overwrite: true, quota: 1_000_000 };
    expect((await store.put('figure.png', png, { ...room, contentType: 'image/png' })).stored).toBe(true);
    expect(
      (await store.put('big.md', Buffer.from(big), { ...room, contentType: 'text/markdown' })).stored,
    ).toBe(true);
    expect((await store.put('notes', Buffer.from('plain words'), room)).stored).toBe(true);
    const blob = await ada[1].readResource({ uri: 'zotero://files/figure.png' });
    expect(blob.contents).toEqual([
      { uri: 'zotero://files/figure.png', mimeType: 'image/png', blob: png.toString('base64') },
    ]);
    const plain = await ada[0].readResource({ uri: 'zotero://files/notes' });
    expect(plain.contents).toEqual([
      { uri: 'zotero://files/notes', mimeType: 'text/plain', text: 'plain words' },
    ]);
    const refused = await refusalOf(ada[0], 'zotero://files/big.md');
    expect(refused.message).toContain(
      'validation_error: big.md is 100,001 bytes, more than a resource embeds (100,000 bytes).',
    );
    for (const path of ['figure.png', 'big.md', 'notes']) expect(await store.delete(path)).toBe(true);
  });

  it('a save past the quota is refused with what is used and free, counted from the database, and writes nothing', async () => {
    // Bob's files: one small table so far. A 30,000-byte finding fits once, not twice.
    const first = await bob[0].callTool({
      name: 'zotero_evidence_table',
      arguments: { question: 'Q', rows: [row('b'.repeat(30_000))], save_path: 'big/one.md' },
    });
    expect(first.isError ?? false).toBe(false);
    const before = await rowsOf('tenant:202');
    const second = await bob[1].callTool({
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
    // What is used: Bob's two tables, as the database holds them.
    const held = Object.values(before).reduce((sum, n) => sum + n, 0);
    expect(Object.keys(before)).toEqual(['big/one.md', 'tables/ev one.md']);
    expect(used).toBe(held);
    expect(free).toBe(52_428 - held);
    expect(size).toBeGreaterThan(free!);
    expect(await rowsOf('tenant:202')).toEqual(before);
    // Replacing the file (through the other replica) gives its room back.
    const replaced = await bob[1].callTool({
      name: 'zotero_evidence_table',
      arguments: { question: 'Q', rows: [row('d'.repeat(30_000))], save_path: 'big/one.md', overwrite: true },
    });
    expect(replaced.isError ?? false).toBe(false);
    const back = await bob[0].readResource({ uri: 'zotero://files/big/one.md' });
    expect((back.contents[0] as { text: string }).text).toContain('ddd');
    expect(filesOnDisk()).toEqual([]);
  });

  it('each person lists and deletes their own saved files over /account/files, through either replica; room comes back', async () => {
    const files = (i: number, token: string, path = '', method = 'GET') =>
      fetch(`${replicas[i]!.url}/account/files${path}`, {
        method,
        headers: { authorization: `Bearer ${token}` },
      });
    const listed = async (i: number, token: string) =>
      (await (await files(i, token)).json()) as {
        used: number;
        quota: number;
        total: number;
        files: Array<{ path: string; size: number; uri: string; content_type: string | null }>;
      };
    const bobs = await listed(0, bobToken);
    expect(bobs.files.map((f) => f.path)).toEqual(['big/one.md', 'tables/ev one.md']);
    expect(bobs).toMatchObject({ quota: 52_428, total: 2 });
    expect(bobs.used).toBe(bobs.files.reduce((sum, f) => sum + f.size, 0));
    expect(bobs.files[1]).toMatchObject({
      uri: 'zotero://files/tables/ev%20one.md',
      content_type: 'text/markdown',
    });
    // Ada's list holds only hers; her token cannot delete Bob's file (it is not hers: 404), his stays.
    expect((await listed(1, adaToken)).files.map((f) => f.path)).not.toContain('big/one.md');
    const stolen = await files(1, adaToken, '/big/one.md', 'DELETE');
    expect(stolen.status).toBe(404);
    expect(Object.keys(await rowsOf('tenant:202'))).toEqual(['big/one.md', 'tables/ev one.md']);
    // No token: 401 naming the metadata, nothing deleted.
    const anonymous = await fetch(`${replicas[0]!.url}/account/files/big/one.md`, { method: 'DELETE' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('resource_metadata=');
    // Bob deletes his large file through replica B: gone from the list and as a resource, room back.
    const deleted = await files(1, bobToken, '/big/one.md', 'DELETE');
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({ deleted: 'big/one.md', quota: 52_428 });
    expect((await listed(0, bobToken)).files.map((f) => f.path)).toEqual(['tables/ev one.md']);
    expect((await refusalOf(bob[0], 'zotero://files/big/one.md')).message).toContain(
      'You have no saved file',
    );
    expect((await files(0, bobToken, '/big/one.md', 'DELETE')).status).toBe(404);
    const fits = await bob[0].callTool({
      name: 'zotero_evidence_table',
      arguments: { question: 'Q', rows: [row('e'.repeat(30_000))], save_path: 'big/two.md' },
    });
    expect(fits.isError ?? false).toBe(false);
    // A path with a space, URL-encoded as the list's paths are.
    expect((await files(0, bobToken, '/tables/ev%20one.md', 'DELETE')).status).toBe(200);
    expect((await listed(1, bobToken)).files.map((f) => f.path)).toEqual(['big/two.md']);
    expect((await files(0, bobToken, '', 'POST')).status).toBe(405);
  });

  it('a plan awaiting apply is the tenant’s row in the state database; another tenant cannot apply it', async () => {
    const [master, other] = mergeKeys as [string, string];
    const preview = await ada[0].callTool({
      name: 'zotero_merge_items',
      arguments: { master_key: master, item_keys: [other] },
    });
    expect(preview.isError ?? false).toBe(false);
    const planId = dataOf(preview).planId as string;
    const client = new pg.Client(databaseUrl);
    await client.connect();
    const rows = await client.query('SELECT owner, kind, library FROM plans WHERE id = $1', [planId]);
    await client.end();
    expect(rows.rows).toEqual([{ owner: 'tenant:101', kind: expect.any(String), library: 'users/101' }]);
    // Nothing of it is on either replica's disk.
    expect(filesOnDisk()).toEqual([]);
    const stolen = await bob[1].callTool({
      name: 'zotero_merge_items',
      arguments: { master_key: master, item_keys: [other], apply: true, plan_id: planId },
    });
    expect(stolen.isError).toBe(true);
    // Not hers to see: as if no such plan existed.
    expect(textOf(stolen)).toMatch(
      /^validation_error: No plan "p_\w+" to apply: there is no such plan, or it has expired\./,
    );
    const applied = await ada[1].callTool({
      name: 'zotero_merge_items',
      arguments: { master_key: master, item_keys: [other], apply: true, plan_id: planId },
    });
    expect(applied.isError ?? false).toBe(false);
    expect(dataOf(applied)).toMatchObject({ applied: true });
  });
});
