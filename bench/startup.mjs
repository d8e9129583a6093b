#!/usr/bin/env node
/**
 * CLI start-up benchmark: `zot --version` and `zot schema` against `node -e 0` on the same
 * machine, median of N runs each, interleaved so machine noise hits all three alike.
 * Targets (issue 2): --version within 2.5x, schema within 3.5x of bare node.
 *
 *   npm run build && node bench/startup.mjs [runs]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const runs = Number(process.argv[2] ?? 21);
const zot = fileURLToPath(new URL('../bin/zot', import.meta.url));
// A home of its own: no config, and the V8 code cache bin/zot keeps ($ZOT_CACHE_DIR/v8) is
// made by the first run and read by the others, as a user's is.
const home = mkdtempSync(join(tmpdir(), 'zoteus-bench-startup-'));
process.on('exit', () => rmSync(home, { recursive: true, force: true }));
const env = { PATH: process.env.PATH, HOME: home, ZOT_CACHE_DIR: join(home, 'cache'), NO_COLOR: '1' };

const cases = {
  'node -e 0': [process.execPath, ['-e', '0']],
  'zot --version': [process.execPath, [zot, '--version']],
  'zot schema': [process.execPath, [zot, 'schema']],
};

const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let i = 0; i < runs; i += 1) {
  for (const [name, [cmd, args]] of Object.entries(cases)) {
    const start = process.hrtime.bigint();
    const r = spawnSync(cmd, args, { env, encoding: 'utf8' });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) throw new Error(`${name} exited ${r.status}: ${r.stderr}`);
    times[name].push(ms);
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const base = median(times['node -e 0']);
console.log(`runs: ${runs} each (median), node ${process.version}`);
for (const name of Object.keys(cases)) {
  const m = median(times[name]);
  console.log(`${name.padEnd(14)} ${m.toFixed(1).padStart(7)} ms  ${(m / base).toFixed(2)}x node -e 0`);
}
