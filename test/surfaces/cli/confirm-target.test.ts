/**
 * A destructive command's question names its target and counts (issue 16, point 4): from the
 * desktop's zotero.sqlite when it holds the library, else by key; "n" changes nothing.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { sandbox } from '../../support/cli.js';
import { runZot, desktopSandbox } from '../../support/cli.js';
import { startKeyServer } from '../../support/key-server.js';
import type { ZoteroTestServer } from '../../support/zotero-server/index.js';
import { SAMPLE_KEYS } from '../../support/zotero-sqlite/index.js';

const KEY = 'AbCdEfGhIjKlMnOpQrStUvWx';
const C = SAMPLE_KEYS.user.collections;
const I = SAMPLE_KEYS.user.items;

let box: ReturnType<typeof sandbox>;
let server: ZoteroTestServer;
beforeAll(async () => {
  server = await startKeyServer(KEY, SAMPLE_KEYS.user.userID);
});
afterAll(() => server.close());
beforeEach(async () => {
  box = await desktopSandbox();
  server.log.length = 0;
});
afterEach(() => box.cleanup());

/** At a terminal (stdin and stdout a TTY), answering `answer`. */
const atTerminal = (args: string[], answer: string, env: Record<string, string> = {}) =>
  runZot(args, {
    env: { ...box.env, ZOTERO_API_KEY: KEY, ZOTERO_API_URL: server.url, ...env },
    tty: true,
    stdin: `${answer}\n`,
  });

/** Requests other than the key check: what reached the cloud. */
const cloudReads = () => server.log.filter((e) => !e.path.startsWith('/keys/'));

describe('the confirmation question', () => {
  it('names the collection, its items and its subcollections from the desktop, and sends nothing for it', async () => {
    const r = await atTerminal(['collection', 'delete', C.climate], 'n');
    expect(r.stdout).toContain(
      `\`zot collection delete\` will delete collection "Climate Science" (${C.climate}) with 3 items and its 3 subcollections; the items stay in the library. Proceed? [y/N]`,
    );
    expect(r.code).toBe(3);
    expect(cloudReads()).toEqual([]);
  });

  it('names the items to delete permanently, with their children', async () => {
    const r = await atTerminal(['delete', I.seaLevelArticle, I.attentionPaper], 'n', {
      ZOTEUS_ALLOW_DELETE: 'true',
    });
    expect(r.stdout).toMatch(
      new RegExp(
        `will delete 2 items permanently: "[^"]+" \\(${I.seaLevelArticle}\\), "Attention Is All You Need" \\(${I.attentionPaper}\\), with their \\d+ child notes and attachments\\. Proceed\\? \\[y/N\\]`,
      ),
    );
    expect(cloudReads()).toEqual([]);
  });

  it('without the desktop, names the target by key and still sends nothing before the answer', async () => {
    const r = await atTerminal(['collection', 'delete', C.climate], 'n', { ZOTEUS_LOCAL: 'off' });
    expect(r.stdout).toContain(
      `will delete collection ${C.climate} and all its subcollections (the items stay in the library). Proceed? [y/N]`,
    );
    expect(r.code).toBe(3);
    expect(cloudReads()).toEqual([]);
  });

  it('names the tag and how many items carry it', async () => {
    const removed = await atTerminal(
      ['tag', 'remove', 'sea level', I.seaLevelArticle, I.attentionPaper],
      'n',
    );
    expect(removed.stdout).toContain(
      'will remove tag "sea level" from 2 items (1 of them carries it). Proceed? [y/N]',
    );
    const deleted = await atTerminal(['tag', 'delete', 'sea level'], 'n');
    expect(deleted.stdout).toMatch(
      /will delete tag "sea level" from the 10 items that carry it\. Proceed\? \[y\/N\]/,
    );
    expect(cloudReads()).toEqual([]);
  });

  it('counts only what would change: missing keys, tags no item carries, items not in the collection', async () => {
    const del = await atTerminal(['delete', I.seaLevelArticle, 'ZZZZ2345'], 'n', {
      ZOTEUS_ALLOW_DELETE: 'true',
    });
    expect(del.stdout).toMatch(
      new RegExp(
        `will delete 1 item permanently: "[^"]+" \\(${I.seaLevelArticle}\\).*; ZZZZ2345 is not in the library\\. Proceed\\?`,
      ),
    );
    const tag = await atTerminal(['tag', 'delete', 'no such tag'], 'n');
    expect(tag.stdout).toContain(
      'will delete tag "no such tag", which no item carries (nothing would change). Proceed?',
    );
    const remove = await atTerminal(['collection', 'remove', C.climate, I.attentionPaper], 'n');
    expect(remove.stdout).toContain('(the items stay in the library; 0 of them are in it). Proceed?');
    expect(cloudReads()).toEqual([]);
  });

  it('"n" changes nothing and is confirmation_required in the envelope', async () => {
    const r = await atTerminal(['collection', 'remove', C.climate, I.seaLevelArticle], 'n', {
      ZOT_FORMAT: 'json',
    });
    expect(r.stdout).toContain(`will remove 1 item from collection "Climate Science" (${C.climate})`);
    const envelope = JSON.parse(r.stdout.slice(r.stdout.indexOf('{"ok"')).trim()) as {
      error: Record<string, unknown>;
    };
    expect(envelope.error).toMatchObject({
      code: 'confirmation_required',
      message: 'Cancelled: nothing was changed.',
    });
    expect(r.code).toBe(3);
    expect(server.log.filter((e) => e.method !== 'GET')).toEqual([]);
  });
});
