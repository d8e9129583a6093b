/**
 * Runs `zot` as a subprocess the way an agent does: argv and env in; stdout, stderr and
 * the exit code out. stdout is a pipe (not a TTY) unless `tty: true`, which runs it under
 * `script` for a real pseudo-terminal.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildSampleLibrary } from './zotero-sqlite/index.js';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const ZOT = join(ROOT, 'bin', 'zot');
export const FIXTURE_ZOT = join(ROOT, 'test', 'support', 'fixture-zot.mjs');

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed line by line (throws if a line is not JSON). */
  json(): Record<string, unknown>;
  lines(): Record<string, unknown>[];
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  stdin?: string;
  tty?: boolean;
  bin?: string;
  timeoutMs?: number;
}

/** A sandbox: its own HOME, config and cache, and no Zotero settings from the machine. */
export function sandbox(): { dir: string; env: Record<string, string>; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'zot-test-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    ZOT_CONFIG_DIR: join(dir, 'config'),
    ZOT_CACHE_DIR: join(dir, 'cache'),
    ZOTEUS_DATA_DIR: join(dir, 'data'),
    ZOTERO_DATA_DIR: join(dir, 'Zotero'),
    FIXTURE_DIR: dir,
    NO_COLOR: '1',
    // Nothing listens on port 9: a test that forgets to point at its test server fails
    // with a network_error instead of reaching the internet.
    ZOTERO_API_URL: 'http://127.0.0.1:9',
    // Nor may a developer's running Zotero answer a test's reads.
    ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9/api',
    ZOTEUS_CROSSREF_URL: 'http://127.0.0.1:9/crossref',
    ZOTEUS_DATACITE_URL: 'http://127.0.0.1:9/datacite',
    ZOTEUS_ARXIV_URL: 'http://127.0.0.1:9/arxiv',
    ZOTEUS_OPENLIBRARY_URL: 'http://127.0.0.1:9/openlibrary',
    ZOTEUS_LOC_URL: 'http://127.0.0.1:9/lcdb',
    ZOTEUS_STYLES_URL: 'http://127.0.0.1:9/styles',
    ZOTEUS_LOCALES_URL: 'http://127.0.0.1:9/locales',
  };
  // A background child (an index build, its code cache) may still write in the sandbox as it
  // goes: rmSync retries on ENOTEMPTY/EBUSY instead of failing the test that started it.
  return {
    dir,
    env,
    cleanup: () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }),
  };
}

/** A sandbox whose Zotero data folder holds the sample library's zotero.sqlite (the desktop, closed). */
export async function desktopSandbox(): Promise<ReturnType<typeof sandbox>> {
  const box = sandbox();
  mkdirSync(box.env.ZOTERO_DATA_DIR!, { recursive: true });
  await buildSampleLibrary(join(box.env.ZOTERO_DATA_DIR!, 'zotero.sqlite'));
  return box;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function runZot(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const bin = options.bin ?? ZOT;
  const env = { ...options.env } as Record<string, string>;
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const [cmd, argv] = options.tty
    ? ['script', ['-qefc', [process.execPath, bin, ...args].map(shellQuote).join(' '), '/dev/null']]
    : [process.execPath, [bin, ...args]];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd as string, argv as string[], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const lines = () =>
        stdout
          .split('\n')
          .filter((l) => l.length > 0)
          .map((l) => JSON.parse(l) as Record<string, unknown>);
      resolvePromise({
        code: code ?? -1,
        stdout,
        stderr,
        lines,
        json: () => {
          const all = lines();
          if (all.length !== 1)
            throw new Error(`expected one JSON line on stdout, got ${all.length}: ${stdout}`);
          return all[0] as Record<string, unknown>;
        },
      });
    });
    if (options.stdin !== undefined) child.stdin.end(options.stdin);
    else child.stdin.end();
  });
}
