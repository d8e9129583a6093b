/**
 * Issue 13's attack on the built CLI: a proxy loses the answers of the writes after the
 * server applied them. `zot collection create LostColl --idempotency-key lc1` used to answer
 * network_error and then, retried, make a second collection; `zot create` duplicated
 * its items the same way.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runZot } from '../../support/cli.js';
import { startDroppingProxy, type DroppingProxy } from '../../support/dropping-proxy.js';
import { startWorld, type World } from '../../core/library/world.js';

let world: World;
let proxy: DroppingProxy;
beforeEach(async () => {
  world = await startWorld();
  proxy = await startDroppingProxy(world.server.url);
});
afterEach(async () => {
  await proxy.close();
  await world.close();
});

const zot = (args: string[]) => runZot(args, { env: world.env({ ZOTERO_API_URL: proxy.url }) });
const lib = () => world.server.library('users/1');
type Envelope = {
  ok: boolean | 'partial';
  data: Record<string, unknown>;
  error?: { code: string; retryable: boolean };
};

describe('a write whose answer is lost', () => {
  it('the engine settles it by itself: one resend, a 412 on its token, a read of the key', async () => {
    proxy.drop({ method: 'POST' });
    const r = await zot(['collection', 'create', 'LostColl', '--idempotency-key', 'lc0']);
    expect(r.code, r.stdout).toBe(0);
    const named = [...lib().collections.values()].filter((c) => c.name === 'LostColl');
    expect(named).toHaveLength(1);
    expect((r.json() as Envelope).data.created).toEqual([named[0]?.key]);
  });

  it('network_error (exit 5, retryable), then the retry with the same key: one collection, then a byte-exact replay', async () => {
    // The POST, both resends and the reads of its key lose their answers: the CLI cannot know what landed.
    proxy.drop({ method: 'POST', times: 3 });
    proxy.drop({ method: 'GET', path: /collectionKey=/, times: 3 });
    const first = await zot(['collection', 'create', 'LostColl', '--idempotency-key', 'lc1']);
    expect(first.code).toBe(5);
    expect((first.json() as Envelope).error).toMatchObject({ code: 'network_error', retryable: true });
    expect([...lib().collections.values()].filter((c) => c.name === 'LostColl')).toHaveLength(1);

    const second = await zot(['collection', 'create', 'LostColl', '--idempotency-key', 'lc1']);
    expect(second.code, second.stdout).toBe(0);
    const named = [...lib().collections.values()].filter((c) => c.name === 'LostColl');
    expect(named).toHaveLength(1);
    expect((second.json() as Envelope).data.created).toEqual([named[0]?.key]);

    world.server.clearLog();
    const third = await zot(['collection', 'create', 'LostColl', '--idempotency-key', 'lc1']);
    expect(third.code).toBe(0);
    expect(third.stdout).toBe(second.stdout);
    expect(world.server.log).toEqual([]);
  });

  it('zot create FILE: three items, answers lost, retried with the key: exactly three items', async () => {
    const file = join(world.box.dir, 'items.json');
    writeFileSync(
      file,
      JSON.stringify([1, 2, 3].map((i) => ({ itemType: 'journalArticle', title: `Lost paper ${i}` }))),
    );
    proxy.drop({ method: 'POST', times: 3 });
    proxy.drop({ method: 'GET', path: /itemKey=/, times: 3 });
    const first = await zot(['create', file, '--idempotency-key', 'k']);
    expect(first.code).toBe(5);
    const second = await zot(['create', file, '--idempotency-key', 'k']);
    expect(second.code, second.stdout).toBe(0);
    const titles = [...lib().items.values()].map((i) => i.title).filter((t) => t?.startsWith('Lost paper'));
    expect(titles.sort()).toEqual(['Lost paper 1', 'Lost paper 2', 'Lost paper 3']);
    const created = (second.json() as Envelope).data.created as Array<{ index: number; key: string }>;
    expect(created.map((c) => c.index)).toEqual([0, 1, 2]);
    for (const c of created) expect(lib().items.get(c.key)?.title).toBe(`Lost paper ${c.index + 1}`);
  });
});
