/**
 * Undo after a partial failure: a tag added to 120 items in batches of 50, sent at once, all
 * but the first the server handles refused (403). Undo restores the 50 items that changed, with
 * requests for them alone, and never touches the 70 the request did not change, even when
 * someone edits one meanwhile.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALICE, startWorld, type World } from '../library/world.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';

const LIB = `users/${ALICE}`;
let w: World;
beforeEach(async () => {
  w = await startWorld();
});
afterEach(async () => {
  await w.close();
});

const lib = () => w.server.library(LIB);

function since(from: number): string[] {
  return w.server.log
    .slice(from)
    .filter((e) => e.path !== '/keys/current' && e.path !== '/schema')
    .map((e) => `${e.method} ${e.path}${e.status >= 400 ? ` ${e.status}` : ''}`);
}

type Envelope = { meta: { request_id: string }; data: Record<string, unknown> };
async function run(args: string[]): Promise<Envelope & { code: number }> {
  const r = await zotAt(args[0] === 'history' ? args : [...args, '--yes'], { env: w.env() });
  return { ...(r.json() as Envelope), code: r.code };
}

describe('undo after a partial failure', () => {
  it('only the items that landed are restored; those refused are not read, written or judged', async () => {
    const keys = lib().addItems(Array.from({ length: 120 }, (_, i) => ({ title: `T${i}` })));
    // The three POSTs go at once: the one the server handles first lands, the other two are refused (403).
    w.server.faults.concurrentEdit({
      match: { method: 'POST' },
      apply: (server) => server.faults.status({ status: 403, times: 2, match: { method: 'POST' } }),
    });
    let mark = w.server.log.length;
    const added = await run(['tag', 'add', 'bulk', ...keys]);
    expect(added.code).toBe(7);
    expect(since(mark).sort()).toEqual([
      ...Array(3).fill(`GET /${LIB}/items`),
      `POST /${LIB}/items`,
      `POST /${LIB}/items 403`,
      `POST /${LIB}/items 403`,
    ]);
    const written = w.server.log.slice(mark).find((e) => e.method === 'POST' && e.status === 200);
    const landed = (written?.body as Array<{ key: string }>).map((o) => o.key);
    expect(landed).toHaveLength(50);
    const refused = new Set(keys.filter((k) => !landed.includes(k)));
    for (const key of keys) {
      expect(lib().items.get(key)?.tags ?? []).toEqual(refused.has(key) ? [] : [{ tag: 'bulk' }]);
    }
    const h = await run(['history', '--limit', '1']);
    expect((h.data.requests as unknown[])[0]).toMatchObject({
      status: 'partial',
      // All 120 journaled before the first batch went; the 70 not written settled as failed.
      objects: { changed: 120, notLanded: 70 },
      undoable: true,
    });

    // Someone edits a refused item: it is no business of this undo.
    const [other] = [...refused] as [string];
    lib().editItem(other, { title: 'Edited by a colleague' });
    const edited = JSON.stringify(lib().items.get(other));

    mark = w.server.log.length;
    const undone = await run(['undo', added.meta.request_id]);
    expect(undone.code, JSON.stringify(undone.data)).toBe(0);
    expect(undone.data).toMatchObject({ conflicts: [], failed: [], unchanged: [] });
    expect((undone.data.updated as string[]).sort()).toEqual([...landed].sort());
    // 50 items: one read, one write.
    expect(since(mark)).toEqual([`GET /${LIB}/items`, `POST /${LIB}/items`]);
    for (const key of keys) expect(lib().items.get(key)?.tags ?? []).toEqual([]);
    expect(JSON.stringify(lib().items.get(other))).toBe(edited);
  });
});
