/**
 * `zotero://files/{path}` read as a caller would, in the three places a caller's files live: a
 * folder on this server's disk (a shared server without a state database), and the state
 * database on SQLite and on PostgreSQL (a tenant's call). The same answers and refusals
 * everywhere: text as text, bytes as a blob, a folder, a missing file and paths out of the
 * folder refused in the same words; on disk, a symlink out of the folder and Zoteus' own
 * state (plans, the journal) are not served either.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ZoteusError } from '../../src/core/errors.js';
import { migrate } from '../../src/core/store/migrations.js';
import { openPostgresClient, openSqliteClient, type SqlClient } from '../../src/core/store/sql.js';
import { tenantFilesMigration } from '../../src/core/store/tenant-files.js';
import type { Deps } from '../../src/core/tool.js';
import { saveFile } from '../../src/render/save.js';
import files from '../../src/resources/files.js';
import { postgresUrl } from '../support/postgres.js';

const root = mkdtempSync(join(tmpdir(), 'zt-files-resource-'));
const clients: SqlClient[] = [];
afterAll(async () => {
  for (const c of clients) await c.close();
  rmSync(root, { recursive: true, force: true });
});

const env = { ZOTEUS_TENANT_QUOTA_MB: '1' };

/** A caller's view: how it saves, and how it reads the resource. */
interface Caller {
  fileRoot: string;
  save: (path: string, content: string | Uint8Array) => Promise<string>;
  read: (path: string) => ReturnType<typeof files.read>;
}

function caller(fileRoot: string, sharedState?: { db: SqlClient; owner: string }): Caller {
  const deps = { fileRoot, env, ...(sharedState ? { sharedState } : {}) } as unknown as Deps;
  return {
    fileRoot,
    save: (path, content) => saveFile(path, content, { fileRoot, env, overwrite: false, sharedState }),
    read: (path) => files.read(deps, { path }),
  };
}

async function refusal(work: Promise<unknown>): Promise<ZoteusError> {
  return work.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => error as ZoteusError,
  );
}

type World = () => Promise<{ ada: Caller; bob: Caller; onDisk: boolean }>;

const inDatabase =
  (connect: () => Promise<SqlClient>): World =>
  async () => {
    const db = await connect();
    clients.push(db);
    await migrate(db, [tenantFilesMigration]);
    const callers = mkdtempSync(join(root, 'callers-'));
    return {
      ada: caller(join(callers, 'ada'), { db, owner: 'tenant:ada' }),
      bob: caller(join(callers, 'bob'), { db, owner: 'tenant:bob' }),
      onDisk: false,
    };
  };

const worlds: [string, World][] = [
  [
    'a folder on disk',
    async () => {
      const callers = mkdtempSync(join(root, 'callers-'));
      return { ada: caller(join(callers, 'ada')), bob: caller(join(callers, 'bob')), onDisk: true };
    },
  ],
  [
    'the state database on SQLite',
    inDatabase(async () => openSqliteClient(join(mkdtempSync(join(root, 's-')), 'state.db'))),
  ],
  [
    'the state database on PostgreSQL',
    inDatabase(async () => openPostgresClient(await postgresUrl(), { max: 2 })),
  ],
];

describe.each(worlds)('zotero://files/{path} from %s', (_name, world) => {
  it('serves text as text and other bytes as a blob, to their owner only', async () => {
    const { ada, bob } = await world();
    await ada.save('tables/ev one.md', '| a |\n');
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 255]);
    await ada.save('figure.png', png);
    await ada.save('notes', 'plain words');
    expect(await ada.read('tables/ev one.md')).toEqual({ mimeType: 'text/markdown', text: '| a |\n' });
    expect(await ada.read('figure.png')).toEqual({ mimeType: 'image/png', bytes: png });
    expect(await ada.read('notes')).toEqual({ mimeType: 'text/plain', text: 'plain words' });
    const theirs = await refusal(bob.read('tables/ev one.md'));
    expect(theirs.code).toBe('not_found');
    expect(theirs.message).toBe('You have no saved file tables/ev one.md.');
  });

  it('refuses a folder, a file past the bound, "..", "~" and a path outside, in the same words', async () => {
    const { ada } = await world();
    await ada.save('tables/a.md', 'x');
    await ada.save('big.md', 'a'.repeat(100_001));
    await ada.save('big.bin', new Uint8Array(75_001));
    const cases: [string, string, string][] = [
      ['tables', 'validation_error', 'tables is a folder; name a file in it.'],
      ['big.md', 'validation_error', 'big.md is 100,001 bytes, more than a resource embeds (100,000 bytes).'],
      ['big.bin', 'validation_error', 'big.bin is 75,001 bytes, more than a resource embeds (75,000 bytes).'],
      [
        '../secret.txt',
        'permission_denied',
        'path may not contain ".." on this shared server: files stay inside your own folder.',
      ],
      [
        '~/.ssh/id_rsa',
        'permission_denied',
        'path may not use "~" on this shared server: there is no home folder to write to.',
      ],
      [
        join(root, 'secret.txt'),
        'permission_denied',
        'path is outside your own folder on this shared server; absolute paths must lie inside it.',
      ],
      ['tables/b.md', 'not_found', 'You have no saved file tables/b.md.'],
    ];
    for (const [path, code, message] of cases) {
      const err = await refusal(ada.read(path));
      expect([err.code, err.message], path).toEqual([code, message]);
    }
  });

  it('on disk only: a symlink out of the folder and Zoteus’ own state are not served', async () => {
    const { ada, onDisk } = await world();
    await ada.save('probe.md', 'x');
    if (!onDisk) {
      // In the database there is no symlink to follow, and plans and the journal are tables of their own.
      await ada.save('plans/p_aaaaaaaaaaaaaaaa.json', '{}');
      expect(await ada.read('plans/p_aaaaaaaaaaaaaaaa.json')).toEqual({
        mimeType: 'application/json',
        text: '{}',
      });
      return;
    }
    const outside = join(root, 'secret.txt');
    writeFileSync(outside, 'the server’s own secret');
    symlinkSync(outside, join(ada.fileRoot, 'link.txt'));
    mkdirSync(join(ada.fileRoot, 'plans'), { recursive: true });
    writeFileSync(join(ada.fileRoot, 'plans', 'p_aaaaaaaaaaaaaaaa.json'), '{}');
    writeFileSync(join(ada.fileRoot, 'journal.db'), 'sqlite');
    const link = await refusal(ada.read('link.txt'));
    expect([link.code, link.message]).toEqual([
      'permission_denied',
      'link.txt leads outside your own folder; it is not served.',
    ]);
    for (const path of ['plans/p_aaaaaaaaaaaaaaaa.json', 'journal.db']) {
      const err = await refusal(ada.read(path));
      expect([err.code, err.message]).toEqual(['not_found', `You have no saved file ${path}.`]);
    }
  });
});

describe('zotero://files/{path} on this machine', () => {
  it('is not served: files are saved at the path given', async () => {
    const err = await refusal(files.read({ env } as unknown as Deps, { path: 'a.md' }));
    expect(err.code).toBe('not_found');
    expect(err.message).toBe(
      'There is no zotero://files/a.md: saved files are served as resources only on a shared server; here a file is saved at the path given.',
    );
  });
});
