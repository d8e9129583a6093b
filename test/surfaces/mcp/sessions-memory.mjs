#!/usr/bin/env node
/**
 * Not a test: a bounded load on a loopback `zoteus --http` to measure what sessions of the
 * older revisions cost. It starts the server (port 0, an isolated environment), opens N
 * 2025-11-25 sessions (initialize, notifications/initialized, tools/list; never closed, as an
 * attacker or a careless client leaves them), 8 at a time, then prints the server's resident
 * memory before and after, and again after WAIT seconds; it stops by itself (at most 5 minutes
 * of load) and kills the server.
 *
 *   node test/surfaces/mcp/sessions-memory.mjs dist/bin/zoteus.js 2000 [WAIT] [WAVES=k] [VAR=VALUE ...]
 *   e.g. ... 2000 30 WAVES=3 ZOTEUS_HTTP_MAX_SESSIONS=2000 ZOTEUS_HTTP_SESSION_IDLE_S=10
 * WAVES repeats the load after each wait: with sessions that expire, memory the first wave
 * took is reused by the next instead of growing.
 * Linux only (reads /proc/<pid>/status).
 */
/* global fetch, clearTimeout */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const [bin = 'dist/bin/zoteus.js', n = '2000', wait = '0', ...rest] = process.argv.slice(2);
const waves = Number(rest.find((a) => a.startsWith('WAVES='))?.slice(6) ?? 1);
const extra = rest.filter((a) => !a.startsWith('WAVES='));
const home = mkdtempSync(join(tmpdir(), 'zoteus-sessions-'));
const env = {
  PATH: process.env.PATH,
  HOME: home,
  ZOT_CONFIG_DIR: join(home, 'config'),
  ZOT_CACHE_DIR: join(home, 'cache'),
  ZOTEUS_DATA_DIR: join(home, 'data'),
  ZOTERO_DATA_DIR: join(home, 'Zotero'),
  ZOTERO_API_URL: 'http://127.0.0.1:9',
  ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9/api',
  ...Object.fromEntries(extra.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
};
const child = spawn(process.execPath, [resolve(bin), '--http', '--port', '0'], {
  env,
  stdio: ['ignore', 'ignore', 'pipe'],
});
let stderr = '';
const url = await new Promise((done, fail) => {
  const timer = setTimeout(() => fail(new Error(`no URL: ${stderr}`)), 15_000);
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    const m = /listening on (\S+)/.exec(stderr);
    if (m) {
      clearTimeout(timer);
      done(m[1]);
    }
  });
});
const rssMB = () =>
  Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024);
const post = (body, headers = {}) =>
  fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
const initialize = (id) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'load', version: '0' } },
});

await (await post(initialize(0))).text(); // warm up
await new Promise((r) => setTimeout(r, 500));
const before = rssMB();
const total = Number(n);
const started = Date.now();
let next = 0;
let opened = 0;
let refused = 0;
async function worker(limit) {
  while (next < limit && Date.now() - started < 300_000) {
    const i = next++;
    const answer = await post(initialize(i + 1));
    await answer.text();
    const session = answer.headers.get('mcp-session-id');
    if (answer.status !== 200 || !session) {
      refused += 1;
      continue;
    }
    opened += 1;
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).text();
    await (await post({ jsonrpc: '2.0', id: `l${i}`, method: 'tools/list' }, headers)).text();
  }
}
const report = { bin, tried: total * waves, rssBeforeMB: before, waves: [] };
for (let wave = 1; wave <= waves; wave += 1) {
  await Promise.all(Array.from({ length: 8 }, () => worker(total * wave)));
  const entry = { wave, rssAfterMB: rssMB() };
  if (Number(wait) > 0) {
    await new Promise((r) => setTimeout(r, Number(wait) * 1000));
    entry[`rssAfter${wait}sMB`] = rssMB();
  }
  report.waves.push(entry);
}
Object.assign(report, { opened, refused, seconds: Math.round((Date.now() - started) / 1000) });
report.expired = (stderr.match(/closed after/g) ?? []).length;
report.settings = extra;
console.log(JSON.stringify(report));
child.kill('SIGTERM');
