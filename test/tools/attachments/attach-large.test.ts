/**
 * A 50 MB upload by the real `zot` (bin/zot, the built CLI) in a child process whose heap is
 * held to 64 MB: the file is streamed from disk to the storage URL, never held whole, and the
 * upload still succeeds with the md5 the server computed from the bytes it received. Its peak
 * resident memory is bounded above a baseline measured the same way, as the bench does
 * (bench/attach.bench-run.ts): the same command, with the same flags, attaching a 1 KB file.
 */
import { createHash } from 'node:crypto';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runZot } from '../../support/cli.js';
import { startWorld, type World } from '../../core/library/world.js';

const LIB = 'users/1';
const SIZE = 50 * 1024 * 1024;
/** The target: the 50 MB upload's peak RSS under 100 MB above the 1 KB upload's. */
const ABOVE_BASELINE_MB = 100;

let world: World;
let path: string;
let md5: string;
beforeAll(async () => {
  world = await startWorld();
  path = join(world.box.dir, 'large.pdf');
  const hash = createHash('md5');
  const out = createWriteStream(path);
  const block = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < SIZE / block.length; i++) {
    block.fill(i % 251);
    if (i === 0) block.write('%PDF-1.7\n');
    hash.update(block);
    if (!out.write(block)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  md5 = hash.digest('hex');
});
afterAll(async () => {
  await world.close();
});

describe('zot attach with a 50 MB file', () => {
  it('succeeds with --max-old-space-size=64, streamed, progress on stderr, peak RSS bounded above a 1 KB upload', async () => {
    const [parent] = world.server.library(LIB).addItems([{ title: 'Large' }]) as [string];
    // Preloaded into the zot process: its peak resident memory, written when it exits.
    const probe = join(world.box.dir, 'rss.mjs');
    const rssOut = join(world.box.dir, 'rss.txt');
    writeFileSync(
      probe,
      `import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => writeFileSync(process.env.RSS_OUT, String(process.resourceUsage().maxRSS)));\n`,
    );
    /** `zot attach` of one file in a child process under the same flags: its result and peak RSS in MB. */
    const attach = async (file: string) => {
      const r = await runZot(['attach', parent, '--file', file], {
        env: { ...world.env(), NODE_OPTIONS: `--import=${probe} --max-old-space-size=64`, RSS_OUT: rssOut },
        timeoutMs: 120_000,
      });
      return { r, peakMb: Number(readFileSync(rssOut, 'utf8')) / 1024 };
    };

    // The baseline: the same command, nothing to stream.
    const tiny = join(world.box.dir, 'tiny.pdf');
    writeFileSync(tiny, Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(1024 - 9, 1)]));
    const baseline = await attach(tiny);
    expect(baseline.r.code).toBe(0);
    expect(baseline.peakMb).toBeGreaterThan(0);

    const { r, peakMb } = await attach(path);
    expect(r.stderr).not.toMatch(/heap out of memory/i);
    expect(r.code).toBe(0);
    const env = r.json() as {
      data: { succeeded: Array<{ key: string; md5: string; size: number; upload: string }> };
    };
    const [file] = env.data.succeeded;
    expect(file).toMatchObject({ md5, size: SIZE, upload: 'uploaded' });
    expect(world.server.files.files.get(`${LIB}/${file!.key}`)).toMatchObject({ md5, size: SIZE });
    expect(world.server.files.bytesReceived).toBeGreaterThan(SIZE);
    expect(r.stderr).toContain('upload 1/1');
    // Buffers live outside the V8 heap: the peak RSS above the baseline shows the file was never held whole.
    expect(peakMb - baseline.peakMb).toBeLessThan(ABOVE_BASELINE_MB);
  }, 300_000);
});
