/**
 * A 50 MB file downloaded from the cloud by the real `zot` (bin/zot, the built CLI) in a child
 * process whose heap is held to 64 MB: the bytes are streamed from the storage host through an
 * MD5 into the save path, never held whole, and arrive byte for byte.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, createReadStream } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runZot } from '../../support/cli.js';
import { startWorld, type World } from '../../core/library/world.js';

const LIB = 'users/1';
const SIZE = 50 * 1024 * 1024;

let world: World;
let bytes: Buffer;
let md5: string;
beforeAll(async () => {
  world = await startWorld();
  bytes = Buffer.alloc(SIZE);
  for (let i = 0; i < SIZE / (1024 * 1024); i++) bytes.fill(i % 251, i * 1024 * 1024, (i + 1) * 1024 * 1024);
  bytes.write('%PDF-1.7\n');
  md5 = createHash('md5').update(bytes).digest('hex');
});
afterAll(async () => {
  await world.close();
});

async function md5Of(path: string): Promise<string> {
  const hash = createHash('md5');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

describe('zot attachment get --save with a 50 MB file in the cloud', () => {
  it('succeeds with --max-old-space-size=64, streamed, byte for byte', async () => {
    const lib = world.server.library(LIB);
    const [parent] = lib.addItems([{ title: 'Large' }]) as [string];
    const [key] = lib.addItems([
      {
        itemType: 'attachment',
        parentItem: parent,
        linkMode: 'imported_file',
        filename: 'large.pdf',
        contentType: 'application/pdf',
      },
    ]) as [string];
    world.server.downloads.putFile(LIB, key, bytes);
    const probe = join(world.box.dir, 'rss.mjs');
    const rssOut = join(world.box.dir, 'rss.txt');
    writeFileSync(
      probe,
      `import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => writeFileSync(process.env.RSS_OUT, String(process.resourceUsage().maxRSS)));\n`,
    );
    const target = join(world.box.dir, 'large-copy.pdf');
    const r = await runZot(['attachment', 'get', key, '--save', target], {
      env: { ...world.env(), NODE_OPTIONS: `--import=${probe} --max-old-space-size=64`, RSS_OUT: rssOut },
      timeoutMs: 120_000,
    });
    expect(r.stderr).not.toMatch(/heap out of memory/i);
    expect(r.code).toBe(0);
    const env = r.json() as { data: { saved: { bytes: number }; file: Record<string, unknown> } };
    expect(env.data.saved.bytes).toBe(SIZE);
    expect(env.data.file).toMatchObject({ source: 'cloud', size: SIZE, md5, md5Matches: true });
    expect(await md5Of(target)).toBe(md5);
    // Buffers live outside the V8 heap: the process's peak RSS shows the file was never held whole.
    const maxRssMb = Number(readFileSync(rssOut, 'utf8')) / 1024;
    expect(maxRssMb).toBeLessThan(140);
  }, 150_000);
});
