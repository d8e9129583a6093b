/**
 * What a one-shot read costs beyond Node's own start is mostly what it loads: a read from
 * zotero.sqlite loads no Node built-in it does not use. node:crypto (~5 ms) only hashes a
 * request for an idempotency key, node:dns only resolves an address being fetched, readline
 * only asks a question; a read does none of these. Nor does it load the Web API client or
 * the readers over it (about 90 KB of code): no route of the read takes them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SAMPLE_KEYS } from '../../support/zotero-sqlite/index.js';
import type { sandbox } from '../../support/cli.js';
import { runZot, desktopSandbox } from '../../support/cli.js';

let box: ReturnType<typeof sandbox>;

beforeEach(async () => {
  box = await desktopSandbox();
});
afterEach(() => box.cleanup());

/** The built-in modules a `zot` run loaded (Node's own list) and its files, with its answer. */
async function loadedBy(
  args: string[],
): Promise<{ code: number; stdout: string; loaded: string[]; files: string[] }> {
  const out = join(box.dir, 'loaded.json');
  const preload = join(box.dir, 'record-loaded.cjs');
  writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({ loaded: process.moduleLoadList, files: Object.keys(require.cache) })));\n`,
  );
  const r = await runZot(args, { env: { ...box.env, NODE_OPTIONS: `--require ${preload}` } });
  const { loaded, files } = JSON.parse(readFileSync(out, 'utf8')) as { loaded: string[]; files: string[] };
  return { code: r.code, stdout: r.stdout, loaded, files };
}

describe('a one-shot read from zotero.sqlite', () => {
  it.each([
    [['read', SAMPLE_KEYS.user.items.seaLevelArticle, '--json']],
    [['collection', 'list', '--json']],
    [['search', 'sea', '--json']],
    [['tag', 'list', '--json']],
    [['stats', '--json']],
  ])('%j loads neither node:crypto, node:dns, readline nor the Web API client', async (args) => {
    const { code, stdout, loaded, files } = await loadedBy(args);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ ok: true });
    const modules = loaded.filter((m) => m.startsWith('NativeModule '));
    expect(modules.length).toBeGreaterThan(20); // the list is Node's own, and it was read
    for (const unused of ['crypto', 'dns/promises', 'readline'])
      expect(modules).not.toContain(`NativeModule ${unused}`);
    // The bundled CLI ran (npm test builds it): its files are the ones loaded, and none holds
    // the client (createZoteroClient), the Web API's library (openWebLibrary) or its reader.
    const bundled = files.filter((f) => /[\\/]dist[\\/]bundle[\\/]/.test(f));
    expect(bundled.length).toBeGreaterThan(10);
    const code_ = bundled.map((f) => readFileSync(f, 'utf8')).join('\n');
    expect(code_).toContain('function openLibraryReader(');
    for (const fn of ['createZoteroClient', 'openWebLibrary', 'createApiReader'])
      expect(code_).not.toContain(`function ${fn}(`);
  });
});
