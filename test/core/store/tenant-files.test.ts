/**
 * A tenant's saved files in the state database (core/store/tenant-files.ts), the same on
 * PostgreSQL and on SQLite through sql.ts: a file saved through one connection (one replica)
 * is read through another, byte for byte; each owner's files are their own; the quota counts
 * the owner's rows, in the transaction that writes, so two saves at once cannot both pass it;
 * an existing file, a folder and a file in the way are refused as on a disk; nothing is
 * written to the replica's folder.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ZoteusError } from '../../../src/core/errors.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { openPostgresClient, openSqliteClient, type SqlClient } from '../../../src/core/store/sql.js';
import { STATE_MIGRATIONS } from '../../../src/core/store/state.js';
import {
  contentTypeOf,
  sqlTenantFileStore,
  tenantFilesMigration,
  type TenantFileStore,
} from '../../../src/core/store/tenant-files.js';
import { saveFile } from '../../../src/render/save.js';
import { postgresUrl } from '../../support/postgres.js';

const root = mkdtempSync(join(tmpdir(), 'zt-tenant-files-'));
const clients: SqlClient[] = [];
afterAll(async () => {
  for (const c of clients) await c.close();
  rmSync(root, { recursive: true, force: true });
});

const env = { ZOTEUS_TENANT_QUOTA_MB: '0.01' }; // 10,485 bytes

async function refusal(work: Promise<unknown>): Promise<ZoteusError> {
  return work.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => error as ZoteusError,
  );
}

async function* chunks(n: number, size: number): AsyncIterable<string> {
  for (let i = 0; i < n; i++) yield 'x'.repeat(size);
}

/**
 * Two connections to one database (two replicas; on SQLite, where one server holds the one
 * connection, the same client twice) and the folder a tenant's saves are confined to, which
 * is never made.
 */
interface World {
  one: SqlClient;
  two: SqlClient;
  folder: string;
  a: TenantFileStore;
  aElsewhere: TenantFileStore;
  b: TenantFileStore;
  save: (
    via: SqlClient,
    owner: string,
    path: string,
    content: string | Uint8Array | AsyncIterable<string | Uint8Array>,
    overwrite?: boolean,
  ) => Promise<string>;
}

function sqlWorld(
  database: () => Promise<string>,
  connect: (where: string) => Promise<SqlClient>,
  twice: boolean,
) {
  return async (): Promise<World> => {
    const where = await database();
    const one = await connect(where);
    const two = twice ? await connect(where) : one;
    clients.push(one, ...(twice ? [two] : []));
    await migrate(one, [tenantFilesMigration]);
    const folder = join(mkdtempSync(join(root, 'callers-')), 'tenant_a');
    return {
      one,
      two,
      folder,
      a: sqlTenantFileStore(one, 'tenant:a'),
      aElsewhere: sqlTenantFileStore(two, 'tenant:a'),
      b: sqlTenantFileStore(two, 'tenant:b'),
      save: (via, owner, path, content, overwrite = false) =>
        saveFile(path, content, { fileRoot: folder, env, overwrite, sharedState: { db: via, owner } }),
    };
  };
}

const engines: [string, () => Promise<World>][] = [
  ['PostgreSQL', sqlWorld(postgresUrl, async (url) => openPostgresClient(url, { max: 3 }), true)],
  [
    'SQLite through sql.ts',
    sqlWorld(
      async () => join(mkdtempSync(join(root, 's-')), 'state.db'),
      async (file) => openSqliteClient(file),
      false,
    ),
  ],
];

const text = (bytes: Uint8Array | undefined) =>
  bytes === undefined ? undefined : Buffer.from(bytes).toString('utf8');

describe('the tenant_files migration', () => {
  it('is in the state database, after the shared limits and before the sign-in tables', () => {
    const ids = STATE_MIGRATIONS.map((m) => m.id);
    expect(ids).toContain('0009_tenant_files');
    expect(ids.indexOf('0009_tenant_files')).toBeGreaterThan(ids.indexOf('0008_shared_limits'));
    expect(ids.indexOf('0009_tenant_files')).toBeLessThan(ids.indexOf('0100_auth'));
  });
});

describe.each(engines)('tenant files in %s', (_name, world) => {
  it('a file saved through one replica is read through another, byte for byte, and not on disk', async () => {
    const w = await world();
    const saved = await w.save(w.one, 'tenant:a', 'tables/ev one.md', '| a | b |\n');
    expect(saved).toBe(join(w.folder, 'tables', 'ev one.md'));
    expect(existsSync(w.folder)).toBe(false);
    expect(text(await w.aElsewhere.read('tables/ev one.md'))).toBe('| a | b |\n');
    expect(await w.aElsewhere.stat('tables/ev one.md')).toEqual({
      kind: 'file',
      size: 10,
      contentType: 'text/markdown',
      updatedAt: expect.any(Number),
    });
    expect(await w.aElsewhere.stat('tables')).toEqual({ kind: 'folder' });
    expect(await w.aElsewhere.stat('tables/ev')).toBeUndefined();

    // Bytes of every value, and a stream, come back exactly.
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 127, 128, 255]);
    await w.save(w.one, 'tenant:a', 'figure.png', png);
    expect(await w.aElsewhere.read('figure.png')).toEqual(png);
    await w.save(w.one, 'tenant:a', 'export.bib', chunks(4, 1_000));
    expect(text(await w.aElsewhere.read('export.bib'))).toBe('x'.repeat(4_000));
    expect((await w.aElsewhere.stat('export.bib'))?.kind === 'file').toBe(true);
    expect(await w.aElsewhere.used()).toBe(10 + png.byteLength + 4_000);
    expect(existsSync(w.folder)).toBe(false);
  });

  it("each owner's files are their own: another owner's path is no file, and their saves and deletes touch only their own", async () => {
    const w = await world();
    await w.save(w.one, 'tenant:a', 'tables/ev.md', 'Ada’s table');
    expect(await w.b.stat('tables/ev.md')).toBeUndefined();
    expect(await w.b.read('tables/ev.md')).toBeUndefined();
    expect(await w.b.stat('tables')).toBeUndefined();
    expect(await w.b.used()).toBe(0);
    expect(await w.b.delete('tables/ev.md')).toBe(false);
    // Bob at the same path: no conflict with Ada's, and each reads their own.
    await w.save(w.two, 'tenant:b', 'tables/ev.md', 'Bob’s table');
    expect(text(await w.aElsewhere.read('tables/ev.md'))).toBe('Ada’s table');
    expect(text(await w.b.read('tables/ev.md'))).toBe('Bob’s table');
    expect(await w.b.delete('tables/ev.md')).toBe(true);
    expect(await w.b.read('tables/ev.md')).toBeUndefined();
    expect(text(await w.a.read('tables/ev.md'))).toBe('Ada’s table');
  });

  it('an existing file is refused without overwrite and left untouched; overwrite replaces it', async () => {
    const w = await world();
    await w.save(w.one, 'tenant:a', 'a.md', 'first');
    const err = await refusal(w.save(w.two, 'tenant:a', 'a.md', 'second'));
    expect(err.code).toBe('conflict');
    expect(err.field).toBe('save_path');
    expect(err.message).toBe(`${join(w.folder, 'a.md')} already exists; it was left untouched.`);
    expect(text(await w.a.read('a.md'))).toBe('first');
    await w.save(w.two, 'tenant:a', 'a.md', 'second', true);
    expect(text(await w.a.read('a.md'))).toBe('second');
    // The store's own answer, when the file appears between the check and the write.
    expect(await w.a.put('a.md', Buffer.from('third'), { overwrite: false, quota: 100 })).toEqual({
      stored: false,
      reason: 'exists',
    });
  });

  it('keeps a folder’s shape: no file where a folder is, none under a file', async () => {
    const w = await world();
    await w.save(w.one, 'tenant:a', 'tables/one.md', 'x');
    const folder = await refusal(w.save(w.one, 'tenant:a', 'tables', 'y', true));
    expect(folder.code).toBe('validation_error');
    expect(folder.message).toBe(`${join(w.folder, 'tables')} is a folder; save_path must name a file.`);
    const under = await refusal(w.save(w.one, 'tenant:a', 'tables/one.md/two.md', 'y'));
    expect(under.code).toBe('validation_error');
    expect(under.message).toBe(
      `Cannot write ${join(w.folder, 'tables', 'one.md', 'two.md')}: ${join(w.folder, 'tables', 'one.md')} is a file, not a folder.`,
    );
    expect(await w.a.used()).toBe(1);
  });

  it('the quota counts the owner’s rows: a save past it is refused with what is used and free, nothing stored', async () => {
    const w = await world();
    await w.save(w.one, 'tenant:a', 'a.md', 'a'.repeat(6_000));
    // Another owner's bytes are not this owner's.
    await w.save(w.two, 'tenant:b', 'big.md', 'b'.repeat(9_000));
    const err = await refusal(w.save(w.two, 'tenant:a', 'b.md', 'b'.repeat(5_000)));
    expect(err.code).toBe('validation_error');
    expect(err.field).toBe('save_path');
    expect(err.message).toBe(
      'This file (5,000 bytes) would pass your quota of 10,485 bytes on this shared server: 6,000 bytes used, 4,485 bytes free. Nothing was written.',
    );
    expect(await w.a.stat('b.md')).toBeUndefined();
    // A stream of unknown length, counted as it comes.
    const streamed = await refusal(w.save(w.one, 'tenant:a', 'c.bib', chunks(10, 1_000)));
    expect(streamed.message).toBe(
      'This file would pass your quota of 10,485 bytes on this shared server: 6,000 bytes used, 4,485 bytes free. Nothing was written.',
    );
    expect(await w.a.stat('c.bib')).toBeUndefined();
    // Replacing a file gives its room back.
    await w.save(w.one, 'tenant:a', 'a.md', 'c'.repeat(10_000), true);
    expect(await w.aElsewhere.used()).toBe(10_000);
    // Deleting gives it back too.
    expect(await w.aElsewhere.delete('a.md')).toBe(true);
    await w.save(w.two, 'tenant:a', 'b.md', 'b'.repeat(5_000));
    expect(await w.a.used()).toBe(5_000);
  });

  it('a stream that fails stores nothing; a database that cannot be used is said so, retryable', async () => {
    const w = await world();
    async function* broken(): AsyncIterable<string> {
      yield 'x'.repeat(1_000);
      throw new Error('connection reset');
    }
    const failed = await refusal(w.save(w.one, 'tenant:a', 'refs/all.bib', broken()));
    expect([failed.code, failed.message]).toEqual([
      'api_error',
      `Writing ${join(w.folder, 'refs', 'all.bib')} failed (error).`,
    ]);
    expect(await w.a.stat('refs/all.bib')).toBeUndefined();
    expect(await w.a.used()).toBe(0);
    // A replica whose connection is gone.
    const gone =
      w.one.dialect === 'postgres'
        ? await openPostgresClient(await postgresUrl())
        : await openSqliteClient(join(mkdtempSync(join(root, 'gone-')), 'state.db'));
    await gone.close();
    const unusable = await refusal(
      saveFile('a.md', 'x', {
        fileRoot: w.folder,
        env,
        overwrite: false,
        sharedState: { db: gone, owner: 'tenant:a' },
      }),
    );
    expect(unusable.code).toBe('network_error');
    expect(unusable.retryable).toBe(true);
    expect(unusable.message).toMatch(
      new RegExp(
        `^Saving ${join(w.folder, 'a.md').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} in the state database failed: .+\\.$`,
      ),
    );
    expect(existsSync(w.folder)).toBe(false);
  });

  it('two saves at once through two replicas cannot both pass the quota', async () => {
    const w = await world();
    for (let round = 0; round < 3; round++) {
      const results = await Promise.allSettled([
        w.save(w.one, 'tenant:a', `r${round}/one.md`, '1'.repeat(6_000)),
        w.save(w.two, 'tenant:a', `r${round}/two.md`, '2'.repeat(6_000)),
      ]);
      const passed = results.filter((r) => r.status === 'fulfilled');
      const refused = results.filter((r) => r.status === 'rejected');
      expect(passed).toHaveLength(1);
      expect((refused[0] as PromiseRejectedResult).reason).toMatchObject({
        code: 'validation_error',
        message: expect.stringContaining('would pass your quota of 10,485 bytes'),
      });
      expect(await w.a.used()).toBe(6_000);
      const kept = (passed[0] as PromiseFulfilledResult<string>).value;
      expect(await w.a.delete(kept.slice(w.folder.length + 1))).toBe(true);
    }
  });
});

describe('contentTypeOf', () => {
  it('names the type by the extension, or none', () => {
    expect(contentTypeOf('tables/ev.MD')).toBe('text/markdown');
    expect(contentTypeOf('refs.bib')).toBe('application/x-bibtex');
    expect(contentTypeOf('paper.pdf')).toBe('application/pdf');
    expect(contentTypeOf('notes')).toBeUndefined();
    expect(contentTypeOf('.md')).toBeUndefined();
    expect(contentTypeOf('data.unknown')).toBeUndefined();
  });
});
