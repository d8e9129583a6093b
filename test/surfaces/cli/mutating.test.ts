/** Dry-run, confirmation, credentials, read-only mode and sync reminders on mutating commands. */
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FIXTURE_ZOT, runZot, sandbox } from '../../support/cli.js';
import { startKeyServer } from '../../support/key-server.js';
import type { ZoteroTestServer } from '../../support/zotero-server/index.js';

let box: ReturnType<typeof sandbox>;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());
const KEY = 'AbCdEfGhIjKlMnOpQrStUvWx';
const zot = (args: string[], env: Record<string, string | undefined> = {}, extra = {}) =>
  runZot(args, { env: { ...box.env, ...env }, bin: FIXTURE_ZOT, ...extra });
const logOf = (name: string) =>
  existsSync(join(box.dir, name)) ? readFileSync(join(box.dir, name), 'utf8') : '';

// A listener standing where the Web API would be: any request to it is a failure of dry-run.
let server: Server;
let hits = 0;
let apiUrl = '';
beforeAll(async () => {
  server = createServer((_req, res) => {
    hits += 1;
    res.end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  apiUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
// A server that answers the key check, for the runs that get as far as the work.
let keys: ZoteroTestServer;
beforeAll(async () => {
  keys = await startKeyServer(KEY);
});
afterAll(() => keys.close());

describe('--dry-run', () => {
  it('prints the planned change, needs no credentials, sends nothing and changes nothing', async () => {
    const r = await zot(['fixture', 'write', 'hello', '--library-id', '77', '--dry-run'], {
      ZOTERO_API_URL: apiUrl,
    });
    expect(r.code).toBe(0);
    const env = r.json();
    expect(Object.keys(env)).toEqual(['ok', 'dry_run', 'data', 'meta']);
    expect(env).toMatchObject({
      ok: true,
      dry_run: true,
      data: {
        would: {
          command: 'fixture write',
          library: { type: 'group', id: 77, source: 'argument' },
          args: { text: 'hello', library_id: 77 },
          change: "append 'hello'",
        },
      },
    });
    expect(hits).toBe(0);
    expect(logOf('writes.log')).toBe('');
  });

  it('still validates: invalid input under --dry-run is validation_error', async () => {
    const r = await zot(['fixture', 'write', '', '--dry-run']);
    expect(r.code).toBe(3);
    expect((r.json().error as { code: string }).code).toBe('validation_error');
  });

  it('refuses library_type group without an id even in a dry run', async () => {
    const r = await zot(['fixture', 'write', 'x', '--library-type', 'group', '--dry-run']);
    expect(r.code).toBe(3);
    expect(r.json().error).toMatchObject({ code: 'validation_error', field: 'library_id' });
  });

  it('works on destructive commands without --yes and on a read-only deployment', async () => {
    const r = await zot(['fixture', 'destroy', 'ABCD2345', '--dry-run'], { ZOTEUS_READ_ONLY: 'true' });
    expect(r.code).toBe(0);
    expect((r.json().data as { would: { command: string } }).would.command).toBe('fixture destroy');
    expect(logOf('destroyed.log')).toBe('');
  });

  it('is refused on read commands', async () => {
    const r = await zot(['fixture', 'list', '--dry-run']);
    expect(r.code).toBe(3);
  });
});

describe('confirmation', () => {
  it('a destructive command on a non-TTY without --yes is confirmation_required (exit 3) and does nothing', async () => {
    const r = await zot(['fixture', 'destroy', 'ABCD2345']);
    expect(r.code).toBe(3);
    expect(r.json().error).toMatchObject({ code: 'confirmation_required', retryable: false });
    expect((r.json().error as { hint: string }).hint).toContain('--yes');
    expect(logOf('destroyed.log')).toBe('');
  });

  it('--yes proceeds', async () => {
    const r = await zot(['fixture', 'destroy', 'ABCD2345', '--yes']);
    expect(r.code).toBe(0);
    expect(r.json().data).toEqual({ deleted: 'ABCD2345', sync_required: true, written_to: 'cloud' });
    expect(logOf('destroyed.log')).toBe('ABCD2345\n');
  });

  it('-y is --yes', async () => {
    expect((await zot(['fixture', 'destroy', 'ABCD2345', '-y'])).code).toBe(0);
  });

  it('--no-interaction on a TTY still refuses instead of asking', async () => {
    const r = await zot(
      ['fixture', 'destroy', 'ABCD2345', '--no-interaction'],
      { ZOT_FORMAT: 'json' },
      { tty: true },
    );
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('confirmation_required');
    expect(logOf('destroyed.log')).toBe('');
  });

  it('on a TTY it asks y/N: "y" proceeds', async () => {
    const r = await zot(
      ['fixture', 'destroy', 'ABCD2345'],
      { ZOT_FORMAT: 'json' },
      { tty: true, stdin: 'y\n' },
    );
    expect(r.stdout).toContain('[y/N]');
    expect(r.code).toBe(0);
    expect(logOf('destroyed.log')).toBe('ABCD2345\n');
  });

  it('on a TTY anything but yes refuses', async () => {
    const r = await zot(
      ['fixture', 'destroy', 'ABCD2345'],
      { ZOT_FORMAT: 'json' },
      { tty: true, stdin: 'n\n' },
    );
    expect(r.code).toBe(3);
    expect(logOf('destroyed.log')).toBe('');
  });

  it('confirmation is checked before credentials', async () => {
    const r = await zot(['fixture', 'destroy', 'ABCD2345']);
    expect((r.json().error as { code: string }).code).toBe('confirmation_required');
  });
});

describe('credentials and read-only mode', () => {
  it('a command that needs a key without one is auth_missing, exit 2, with a hint, and does nothing', async () => {
    const r = await zot(['fixture', 'write', 'hello']);
    expect(r.code).toBe(2);
    const error = r.json().error as Record<string, unknown>;
    expect(error).toMatchObject({ code: 'auth_missing', retryable: false });
    expect(error.hint).toContain('ZOTERO_API_KEY');
    expect(logOf('writes.log')).toBe('');
  });

  it('input validation comes before credentials', async () => {
    const r = await zot(['fixture', 'write', '']);
    expect((r.json().error as { code: string }).code).toBe('validation_error');
  });

  it('ZOT_API_KEY is an alias of ZOTERO_API_KEY', async () => {
    const r = await zot(['fixture', 'write', 'hello'], { ZOT_API_KEY: KEY, ZOTERO_API_URL: keys.url });
    expect(r.code).toBe(0);
  });

  it('read-only mode refuses a write with permission_denied (exit 2)', async () => {
    const r = await zot(['fixture', 'write', 'hello'], { ZOTERO_API_KEY: KEY, ZOTEUS_READ_ONLY: 'true' });
    expect(r.code).toBe(2);
    expect(r.json().error).toMatchObject({ code: 'permission_denied' });
    expect(logOf('writes.log')).toBe('');
  });
});

describe('mutating success', () => {
  it('adds data.sync_required, a next slot of real commands, and a SYNC_REMINDER on stderr', async () => {
    const r = await zot(['fixture', 'write', 'hello'], { ZOTERO_API_KEY: KEY, ZOTERO_API_URL: keys.url });
    expect(r.code).toBe(0);
    const env = r.json();
    expect(Object.keys(env)).toEqual(['ok', 'data', 'next', 'meta']);
    expect(env.data).toEqual({ written: 'hello', count: 1, sync_required: true, written_to: 'cloud' });
    expect(env.next).toEqual(['zot fixture list', 'zot whoami']);
    expect(r.stderr).toMatch(/^SYNC_REMINDER: /m);
    expect(logOf('writes.log')).toBe('hello\n');
  });

  it('a partial batch is ok:"partial", exit 7, with meta.total and sync_required', async () => {
    const r = await zot(['fixture', 'batch', 'a', 'bad-1', 'b']);
    expect(r.code).toBe(7);
    const env = r.json();
    expect(env.ok).toBe('partial');
    expect(env.data).toEqual({
      succeeded: [
        { entry: 'a', key: 'K2222220' },
        { entry: 'b', key: 'K2222221' },
      ],
      failed: [
        {
          entry: 'bad-1',
          error: {
            code: 'network_error',
            message: 'Could not reach the resolver for bad-1.',
            retryable: true,
          },
        },
      ],
      sync_required: true,
      written_to: 'cloud',
    });
    expect(env.meta).toMatchObject({ total: 3, sync_required: true });
  });

  it('a batch where every entry failed is ok:false with the shared code and the entries in error.failed', async () => {
    const r = await zot(['fixture', 'batch', 'bad-1', 'bad-2']);
    expect(r.code).toBe(5);
    const error = r.json().error as Record<string, unknown>;
    expect(error.code).toBe('network_error');
    expect(error.retryable).toBe(true);
    expect((error.failed as unknown[]).length).toBe(2);
  });

  it('progress events go to stderr as NDJSON with request_id and elapsed_ms; stdout stays one envelope', async () => {
    const r = await zot(['fixture', 'batch', 'a', 'b']);
    const events = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const requestId = (r.json().meta as { request_id: string }).request_id;
    expect(events.map((e) => e.event)).toEqual(['start', 'complete']);
    expect(events[0]).toMatchObject({
      event: 'start',
      phase: 'batch_add',
      done: 0,
      total: 2,
      request_id: requestId,
    });
    expect(events[1]).toMatchObject({ event: 'complete', done: 2, total: 2, succeeded: 2, failed: 0 });
    expect(typeof events[1]?.elapsed_ms).toBe('number');
  });
});
