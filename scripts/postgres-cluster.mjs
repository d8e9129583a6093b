#!/usr/bin/env node
// A throwaway PostgreSQL cluster for the tests: initdb in a temporary folder, the server on a
// free loopback port, trust authentication (nothing but this machine reaches it). PostgreSQL
// refuses to run as root, so as root the cluster belongs to `nobody`.
//
//   node scripts/postgres-cluster.mjs start   prints the admin URL (postgres://…/postgres)
//                                             and the folder; the server keeps running
//   node scripts/postgres-cluster.mjs stop DIR
//
// The tests' global setup (test/support/postgres-setup.ts) calls startCluster itself when
// ZOTEUS_TEST_DATABASE_URL is not set, so `npm test` needs only the server binaries
// (Debian: `apt-get install postgresql`).
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of initdb and pg_ctl: PATH, else Debian's versioned folders, newest first. */
export function findBinaries() {
  const onPath = spawnSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return onPath.replace(/\/pg_ctl$/, '');
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0], 'bin') : undefined;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

function runAsOwner(bin, args) {
  const command = asRoot ? 'runuser' : bin;
  const argv = asRoot ? ['-u', 'nobody', '--', bin, ...args] : args;
  execFileSync(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], cwd: tmpdir() });
}

export const HOW_TO_GET_POSTGRES =
  'PostgreSQL server binaries are needed for these tests: install them (Debian: apt-get install postgresql) ' +
  'or point ZOTEUS_TEST_DATABASE_URL at a server where this user may create databases ' +
  '(postgres://user@127.0.0.1:5432/postgres).';

/** Starts a cluster; resolves to its admin URL and a stop function. */
export async function startCluster() {
  const bin = findBinaries();
  if (!bin) throw new Error(HOW_TO_GET_POSTGRES);
  const dir = mkdtempSync(join(tmpdir(), 'zoteus-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const port = await freePort();
  runAsOwner(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
  runAsOwner(join(bin, 'pg_ctl'), [
    '-D',
    data,
    '-l',
    join(dir, 'server.log'),
    '-w',
    '-o',
    `-p ${port} -h 127.0.0.1 -k ${dir} -c fsync=off -c max_connections=300`,
    'start',
  ]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const options = `-p ${port} -h 127.0.0.1 -k ${dir} -c fsync=off -c max_connections=300`;
  return {
    url,
    dir,
    stop: () => stopCluster(dir),
    // For fault tests: the server down (connections cut) and up again on the same port and data.
    pause: () => runAsOwner(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']),
    resume: () =>
      runAsOwner(join(bin, 'pg_ctl'), [
        '-D',
        data,
        '-l',
        join(dir, 'server.log'),
        '-w',
        '-o',
        options,
        'start',
      ]),
  };
}

export function stopCluster(dir) {
  const bin = findBinaries();
  if (bin && existsSync(join(dir, 'data'))) {
    try {
      runAsOwner(join(bin, 'pg_ctl'), ['-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop']);
    } catch {
      // Already stopped.
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, dir] = process.argv.slice(2);
  if (command === 'start') {
    const cluster = await startCluster();
    process.stdout.write(`${cluster.url}\n${cluster.dir}\n`);
  } else if (command === 'stop' && dir) {
    stopCluster(dir);
  } else {
    process.stderr.write('usage: postgres-cluster.mjs start | stop DIR\n');
    process.exit(2);
  }
}
