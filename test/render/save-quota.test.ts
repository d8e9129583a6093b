/**
 * The quota of a caller's saved files on a shared deployment (ZOTEUS_TENANT_QUOTA_MB): a save
 * past it is refused with what is used and free and leaves nothing behind, a stream of unknown
 * length included; Zoteus' own state in the folder (plans, the journal) does not count; the
 * resource URI of a saved file.
 */
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ZoteusError } from '../../src/core/errors.js';
import { fileResourceUri, saveFile, tenantQuotaBytes, usedBytes } from '../../src/render/save.js';

const env = { ZOTEUS_TENANT_QUOTA_MB: '0.01' }; // 10,485 bytes

function folder(): string {
  return mkdtempSync(join(tmpdir(), 'zt-quota-'));
}

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

describe('the quota of a caller’s files', () => {
  it('refuses bytes past it before writing, with what is used and free', async () => {
    const root = folder();
    await saveFile('a.md', 'a'.repeat(6_000), { fileRoot: root, env, overwrite: false });
    const err = await refusal(saveFile('b.md', 'b'.repeat(5_000), { fileRoot: root, env, overwrite: false }));
    expect(err.code).toBe('validation_error');
    expect(err.field).toBe('save_path');
    expect(err.message).toBe(
      'This file (5,000 bytes) would pass your quota of 10,485 bytes on this shared server: 6,000 bytes used, 4,485 bytes free. Nothing was written.',
    );
    expect(readdirSync(root)).toEqual(['a.md']);
    // Replacing a.md gives its 6,000 bytes back.
    await saveFile('a.md', 'c'.repeat(9_000), { fileRoot: root, env, overwrite: true });
    expect(await usedBytes(root)).toBe(9_000);
  });

  it('refuses a stream once it passes, leaving no file and no temporary file', async () => {
    const root = folder();
    const err = await refusal(
      saveFile('export.bib', chunks(20, 1_000), { fileRoot: root, env, overwrite: false }),
    );
    expect(err.message).toBe(
      'This file would pass your quota of 10,485 bytes on this shared server: 0 bytes used, 10,485 bytes free. Nothing was written.',
    );
    expect(readdirSync(root)).toEqual([]);
    await saveFile('small.bib', chunks(10, 1_000), { fileRoot: root, env, overwrite: false });
    expect(readdirSync(root)).toEqual(['small.bib']);
  });

  it('does not count plans or the journal kept in the folder, nor apply locally', async () => {
    const root = folder();
    mkdirSync(join(root, 'plans'));
    writeFileSync(join(root, 'plans', 'p_aaaaaaaaaaaaaaaa.json'), 'p'.repeat(50_000));
    writeFileSync(join(root, 'journal.db'), 'j'.repeat(50_000));
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'sub', 'journal.db'), 'mine');
    expect(await usedBytes(root)).toBe(4);
    await saveFile('t.md', 't'.repeat(10_000), { fileRoot: root, env, overwrite: false });
    const here = folder();
    await saveFile(join(here, 'big.md'), 'x'.repeat(20_000), { env, overwrite: false });
  });

  it('is 100 MB unless set; a setting that is not a positive number is refused', () => {
    expect(tenantQuotaBytes({})).toBe(100 * 1024 * 1024);
    expect(tenantQuotaBytes({ ZOTEUS_TENANT_QUOTA_MB: '2.5' })).toBe(2.5 * 1024 * 1024);
    for (const bad of ['0', '-1', 'lots']) {
      expect(() => tenantQuotaBytes({ ZOTEUS_TENANT_QUOTA_MB: bad })).toThrow(
        `ZOTEUS_TENANT_QUOTA_MB must be a positive number of megabytes; got "${bad}".`,
      );
    }
  });

  it('names a saved file by its resource, each segment encoded; a path outside has none', () => {
    const root = folder();
    expect(fileResourceUri(root, join(root, 'tables', 'a b#1.md'))).toBe(
      'zotero://files/tables/a%20b%231.md',
    );
    expect(fileResourceUri(root, join(root, '..', 'x.md'))).toBeUndefined();
  });
});
