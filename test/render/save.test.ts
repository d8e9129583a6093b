/** Saving: atomic writes, overwrite rules, `~`, and confinement on a shared deployment. */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZoteusError } from '../../src/core/errors.js';
import { resolveSavePath, saveFile } from '../../src/render/save.js';
import { onCli, onMcp } from '../support/refs.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'zoteus-save-'));
});
afterEach(() => {
  chmodSync(dir, 0o700);
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ HOME: join(dir, 'home') });
const local = (overwrite = false) => ({ overwrite, env: env(), cwd: join(dir, 'cwd') });

/** Every file under a folder, relative, so a test can assert nothing else was left. */
function filesUnder(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => join(e.parentPath, e.name).slice(root.length + 1))
    .sort();
}

async function refused(work: Promise<unknown>, code: string, field = 'save_path'): Promise<ZoteusError> {
  const error = await work.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ZoteusError);
  expect(error).toMatchObject({ code, field });
  return error as ZoteusError;
}

describe('saving locally (no fileRoot)', () => {
  it('writes the exact bytes, creates parents, returns the absolute path, leaves no temp file', async () => {
    const target = join(dir, 'out', 'deep', 'table.csv');
    const content = 'a,b\r\n"x\r\ny",日本\r\n';
    const saved = await saveFile(target, content, local());
    expect(saved).toBe(target);
    expect(readFileSync(target).equals(Buffer.from(content, 'utf8'))).toBe(true);
    expect(filesUnder(join(dir, 'out'))).toEqual([join('deep', 'table.csv')]);
  });

  it('saves under the longest name the file system takes (255 bytes), both ways, leaving no temp file', async () => {
    // 84 three-byte characters and `.md`: 255 bytes of UTF-8, the Linux limit of one name.
    const name = `${'表'.repeat(84)}.md`;
    expect(Buffer.byteLength(name)).toBe(255);
    const target = join(dir, name);
    expect(await saveFile(target, 'first', local(false))).toBe(target);
    expect(await saveFile(target, 'second', local(true))).toBe(target);
    expect(readFileSync(target, 'utf8')).toBe('second');
    expect(filesUnder(dir)).toEqual([name]);
    // One byte more is no usable name: refused in the caller's terms, nothing written.
    const error = await refused(saveFile(join(dir, `${name}x`), 'x', local()), 'validation_error');
    expect(error.message).toContain('ENAMETOOLONG');
    expect(filesUnder(dir)).toEqual([name]);
  });

  it('resolves a relative path against the working folder and expands ~', async () => {
    expect(await saveFile('rel/t.md', 'x', local())).toBe(join(dir, 'cwd', 'rel', 't.md'));
    expect(await saveFile('~/tables/t.md', 'y', local())).toBe(join(dir, 'home', 'tables', 't.md'));
    expect(readFileSync(join(dir, 'home', 'tables', 't.md'), 'utf8')).toBe('y');
    expect(resolveSavePath('~', { env: env() })).toBe(join(dir, 'home'));
  });

  it('refuses an existing file unless overwrite, leaving it untouched and no temp file', async () => {
    const target = join(dir, 't.md');
    writeFileSync(target, 'original');
    const error = await refused(saveFile(target, 'new', local(false)), 'conflict');
    expect(error.message).toContain('already exists');
    // One hint, in each surface's words.
    expect(onMcp(error.hint ?? '')).toContain('overwrite: true');
    await refused(saveFile(target, 'new', local(false)), 'conflict').then((e) =>
      expect(onCli(e.hint ?? '')).toContain('--overwrite'),
    );
    expect(readFileSync(target, 'utf8')).toBe('original');
    expect(filesUnder(dir)).toEqual(['t.md']);
    await saveFile(target, 'replaced', local(true));
    expect(readFileSync(target, 'utf8')).toBe('replaced');
    expect(filesUnder(dir)).toEqual(['t.md']);
  });

  it('refuses a folder, a path through a file, an empty path and a NUL byte', async () => {
    mkdirSync(join(dir, 'folder'));
    writeFileSync(join(dir, 'file'), 'x');
    await refused(saveFile(join(dir, 'folder'), 'x', local(true)), 'validation_error');
    await refused(saveFile(join(dir, 'file', 'under.md'), 'x', local(true)), 'validation_error');
    await refused(saveFile('', 'x', local()), 'validation_error');
    await refused(saveFile('  ', 'x', local()), 'validation_error');
    await refused(saveFile('a\0b', 'x', local()), 'validation_error');
    expect(filesUnder(dir)).toEqual(['file']);
  });

  it('writes through a symlinked file to its target, keeping the link', async () => {
    const real = join(dir, 'real.md');
    writeFileSync(real, 'old');
    symlinkSync(real, join(dir, 'link.md'));
    expect(await saveFile(join(dir, 'link.md'), 'new', local(true))).toBe(real);
    expect(readFileSync(real, 'utf8')).toBe('new');
    expect(readlinkSync(join(dir, 'link.md'))).toBe(real);
  });

  it.skipIf(process.getuid?.() === 0)('a folder it may not write is permission_denied', async () => {
    mkdirSync(join(dir, 'locked'));
    chmodSync(join(dir, 'locked'), 0o500);
    await refused(saveFile(join(dir, 'locked', 't.md'), 'x', local()), 'permission_denied');
    chmodSync(join(dir, 'locked'), 0o700);
  });

  it('two callers racing for one new name: exactly one wins, the others are refused', async () => {
    const target = join(dir, 'race.md');
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => saveFile(target, `writer ${i}\n`.repeat(2000), local(false))),
    );
    const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    expect(won.length).toBe(1);
    for (const r of results)
      if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'conflict' });
    expect(readFileSync(target, 'utf8')).toBe(`writer ${won[0]}\n`.repeat(2000));
    expect(filesUnder(dir)).toEqual(['race.md']);
  });

  it('is atomic: a reader in another process only ever sees a whole old or a whole new table', async () => {
    const target = join(dir, 'atomic.csv');
    const a = 'A'.repeat(4 << 20);
    const b = 'B'.repeat(4 << 20);
    writeFileSync(target, a);
    // A separate process reads the file as fast as it can and reports any torn read.
    // A separate process reads the file as fast as it can for a second and counts torn reads
    // (a plain writeFile loop in place of saveFile makes nearly every read torn).
    const reader = spawn(
      process.execPath,
      [
        '-e',
        `const fs=require('fs');let torn=0,reads=0;const end=Date.now()+1000;
         while(Date.now()<end){let s;try{s=fs.readFileSync(process.argv[1],'latin1')}catch{continue}
           reads++;if(s.length!==${4 << 20}||(s[0]!==s[s.length-1]))torn++}
         process.stdout.write(JSON.stringify({torn,reads}))`,
        target,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    let finished = false;
    reader.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const done = new Promise<void>((r) =>
      reader.on('close', () => {
        finished = true;
        r();
      }),
    );
    let writes = 0;
    while (!finished) {
      await saveFile(target, writes % 2 ? a : b, local(true));
      writes += 1;
    }
    await done;
    const { torn, reads } = JSON.parse(out) as { torn: number; reads: number };
    expect(writes).toBeGreaterThan(2);
    expect(reads).toBeGreaterThan(0);
    expect(torn).toBe(0);
    expect(filesUnder(dir)).toEqual(['atomic.csv']);
  });
});

describe('saving on a shared deployment (fileRoot set)', () => {
  let root: string;
  let outside: string;
  beforeEach(() => {
    root = join(dir, 'data', 'callers', 'c1');
    outside = join(dir, 'outside');
    mkdirSync(outside, { recursive: true });
  });
  const shared = (overwrite = false) => ({ overwrite, env: env(), fileRoot: root });

  it('puts a relative path inside the caller folder (created on first use)', async () => {
    const saved = await saveFile('tables/t.md', 'x', shared());
    expect(saved).toBe(join(root, 'tables', 't.md'));
    expect(readFileSync(saved, 'utf8')).toBe('x');
  });

  it('accepts an absolute path inside the folder', async () => {
    expect(await saveFile(join(root, 'abs.md'), 'x', shared())).toBe(join(root, 'abs.md'));
  });

  it.each([
    ['../escape.md'],
    ['../../outside/escape.md'],
    ['tables/../../escape.md'],
    ['tables/../inside-but-dotted.md'],
    ['..\\escape.md'],
    ['~/escape.md'],
    ['~'],
  ])('refuses %j before writing anything', async (path) => {
    const error = await refused(saveFile(path, 'x', shared(true)), 'permission_denied');
    expect(error.hint).toContain('your own folder');
    expect(filesUnder(dir)).toEqual([]);
  });

  it('refuses absolute paths outside the folder', async () => {
    await refused(saveFile(join(outside, 'x.md'), 'x', shared(true)), 'permission_denied');
    await refused(
      saveFile(join(dir, 'data', 'callers', 'c2', 'x.md'), 'x', shared(true)),
      'permission_denied',
    );
    await refused(saveFile(`${root}-sibling/x.md`, 'x', shared(true)), 'permission_denied');
    expect(filesUnder(dir)).toEqual([]);
  });

  it('refuses the folder itself', async () => {
    await refused(saveFile('.', 'x', shared(true)), 'validation_error');
    await refused(saveFile(root, 'x', shared(true)), 'validation_error');
  });

  it('refuses a symlinked folder that leads outside, at any depth', async () => {
    mkdirSync(root, { recursive: true });
    symlinkSync(outside, join(root, 'link'));
    await refused(saveFile('link/x.md', 'x', shared(true)), 'permission_denied');
    await refused(saveFile('link/new/deeper/x.md', 'x', shared(true)), 'permission_denied');
    mkdirSync(join(outside, 'sub'));
    await refused(saveFile('link/sub/x.md', 'x', shared(true)), 'permission_denied');
    expect(filesUnder(outside)).toEqual([]);
    expect(readdirSync(join(outside, 'sub'))).toEqual([]);
  });

  it('refuses a symlinked file that leads outside, leaving its target untouched', async () => {
    mkdirSync(root, { recursive: true });
    writeFileSync(join(outside, 'victim.md'), 'precious');
    symlinkSync(join(outside, 'victim.md'), join(root, 'evil.md'));
    await refused(saveFile('evil.md', 'pwned', shared(true)), 'permission_denied');
    await refused(saveFile('evil.md', 'pwned', shared(false)), 'permission_denied');
    expect(readFileSync(join(outside, 'victim.md'), 'utf8')).toBe('precious');
  });

  it('refuses a dangling symlink (where it leads cannot be checked)', async () => {
    mkdirSync(root, { recursive: true });
    symlinkSync(join(outside, 'nothing-yet.md'), join(root, 'dangling.md'));
    await refused(saveFile('dangling.md', 'x', shared(true)), 'permission_denied');
    expect(existsSync(join(outside, 'nothing-yet.md'))).toBe(false);
  });

  it('follows a symlink that stays inside the folder', async () => {
    mkdirSync(join(root, 'real'), { recursive: true });
    symlinkSync(join(root, 'real'), join(root, 'alias'));
    expect(await saveFile('alias/x.md', 'x', shared())).toBe(join(root, 'alias', 'x.md'));
    expect(readFileSync(join(root, 'real', 'x.md'), 'utf8')).toBe('x');
  });

  it('works when the data folder itself is reached through a symlink', async () => {
    const realData = join(dir, 'real-data');
    mkdirSync(realData);
    symlinkSync(realData, join(dir, 'data-link'));
    const linkedRoot = join(dir, 'data-link', 'callers', 'c9');
    const saved = await saveFile('t.md', 'x', { overwrite: false, env: env(), fileRoot: linkedRoot });
    expect(saved).toBe(join(linkedRoot, 't.md'));
    expect(readFileSync(join(realData, 'callers', 'c9', 't.md'), 'utf8')).toBe('x');
  });

  it('resolves paths lexically without touching the disk', () => {
    expect(resolveSavePath('a/b.md', { env: env(), fileRoot: root })).toBe(join(root, 'a', 'b.md'));
    expect(resolveSavePath('a/b.md', { env: env(), cwd: '/w' })).toBe(resolve('/w/a/b.md'));
    expect(existsSync(root)).toBe(false);
  });
});
