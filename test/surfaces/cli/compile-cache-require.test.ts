/**
 * On Node 20 the code cache's hook (surfaces/cli/compile-cache.ts) also loads a bundle file
 * another one requires (`./x.js`, `../chunks/x.js`) without Node's resolution; it must load
 * as Node's `require` does: one module per file, a failed one evaluated again on the next
 * require, a missing one Node's own error, a package or a built-in through Node.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../../support/cli.js';

const ownCache =
  typeof (Module as unknown as { enableCompileCache?: unknown }).enableCompileCache !== 'function';
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'zot-require-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `files` under a bundle folder, runs `main.js` there with the cache installed, returns what it exported. */
function runBundle(files: Record<string, string>): Record<string, unknown> {
  const root = join(dir, 'bundle');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(root, name, '..'), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  writeFileSync(join(root, 'package.json'), '{"type":"commonjs"}\n');
  const script = [
    `require(${JSON.stringify(join(ROOT, 'dist', 'bundle', 'surfaces', 'cli', 'compile-cache.js'))})`,
    `.installCompileCache(${JSON.stringify(root)}, { ZOT_CACHE_DIR: ${JSON.stringify(join(dir, 'cache'))} });`,
    `process.stdout.write(JSON.stringify(require(${JSON.stringify(join(root, 'main.js'))})));`,
  ].join('');
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe.runIf(ownCache)('a bundle file required by another', () => {
  it('is one module, under its own path, whichever way it is named', () => {
    const out = runBundle({
      'main.js': [
        "const a = require('./chunks/a.js');",
        "const again = require('./chunks/../chunks/a.js');",
        "const b = require('./chunks/b.js');",
        'exports.same = a === again && b.a === a;',
        'exports.runs = globalThis.runs;',
        'exports.aParent = b.aParent;',
        'exports.cached = Object.keys(require.cache).filter((k) => k.startsWith(__dirname)).map((k) => k.slice(__dirname.length)).sort();',
        "exports.path = require('node:path').sep;",
        "exports.builtin = typeof require('node:fs').readFileSync;",
      ].join('\n'),
      'chunks/a.js': 'globalThis.runs = (globalThis.runs ?? 0) + 1; exports.file = __filename;',
      'chunks/b.js':
        "exports.a = require('./a.js'); exports.aParent = module.parent.filename.endsWith('main.js');",
    });
    const sep = out.path as string;
    expect(out).toMatchObject({ same: true, runs: 1, aParent: true, builtin: 'function' });
    expect(out.cached).toEqual([`${sep}chunks${sep}a.js`, `${sep}chunks${sep}b.js`, `${sep}main.js`]);
  });

  it('that throws is evaluated again on the next require; one that is missing is Node’s MODULE_NOT_FOUND', () => {
    const out = runBundle({
      'main.js': [
        'const tries = [];',
        "for (let i = 0; i < 2; i += 1) { try { require('./chunks/bad.js'); } catch (e) { tries.push(e.message); } }",
        'exports.tries = tries;',
        'exports.badCached = Object.keys(require.cache).some((k) => k.endsWith("bad.js"));',
        "try { require('./chunks/missing.js'); } catch (e) { exports.missing = e.code; exports.message = e.message.split('\\n')[0]; }",
      ].join('\n'),
      'chunks/bad.js':
        "globalThis.bad = (globalThis.bad ?? 0) + 1; throw new Error('bad ' + globalThis.bad);",
    });
    expect(out.tries).toEqual(['bad 1', 'bad 2']);
    expect(out.badCached).toBe(false);
    expect(out.missing).toBe('MODULE_NOT_FOUND');
    expect(out.message).toBe("Cannot find module './chunks/missing.js'");
  });
});
