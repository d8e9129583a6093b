/**
 * What a one-shot read costs beyond Node's own start is mostly what it loads: a read from
 * zotero.sqlite loads no Node built-in it does not use. node:crypto (~5 ms) only hashes a
 * request for an idempotency key, node:dns only resolves an address being fetched, readline
 * only asks a question; a read does none of these.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildSampleLibrary, SAMPLE_KEYS } from '../../support/zotero-sqlite/index.js';
import { runZot, sandbox } from '../../support/cli.js';

let box: ReturnType<typeof sandbox>;

beforeEach(async () => {
  box = sandbox();
  mkdirSync(box.env.ZOTERO_DATA_DIR!, { recursive: true });
  await buildSampleLibrary(join(box.env.ZOTERO_DATA_DIR!, 'zotero.sqlite'));
});
afterEach(() => box.cleanup());

/** The built-in modules a `zot` run loaded (Node's own list), with its answer. */
async function loadedBy(args: string[]): Promise<{ code: number; stdout: string; loaded: string[] }> {
  const out = join(box.dir, 'loaded.txt');
  const preload = join(box.dir, 'record-loaded.cjs');
  writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join('\\n')));\n`,
  );
  const r = await runZot(args, { env: { ...box.env, NODE_OPTIONS: `--require ${preload}` } });
  return { code: r.code, stdout: r.stdout, loaded: readFileSync(out, 'utf8').split('\n') };
}

describe('a one-shot read from zotero.sqlite', () => {
  it.each([[['read', SAMPLE_KEYS.user.items.seaLevelArticle, '--json']], [['collection', 'list', '--json']]])(
    '%j loads neither node:crypto, node:dns nor readline',
    async (args) => {
      const { code, stdout, loaded } = await loadedBy(args);
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ ok: true });
      const modules = loaded.filter((m) => m.startsWith('NativeModule '));
      expect(modules.length).toBeGreaterThan(20); // the list is Node's own, and it was read
      for (const unused of ['crypto', 'dns/promises', 'readline'])
        expect(modules).not.toContain(`NativeModule ${unused}`);
    },
  );
});
