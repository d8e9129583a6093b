/**
 * `zot auth local|status|logout` against the test server's Zotero 10 local API: the dialog's
 * answer is the server's test hook (`answer`), the key lands in the profile (0600), and an
 * agent (no TTY) is refused before anything is asked.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LocalWritesConfig } from '../../support/zotero-server/local-writes.js';
import { ALICE, startWorld, type World } from '../../core/library/world.js';
import { zotAt } from './terminal-harness.js';

let world: World;
let localUrl: string;
let writes: LocalWritesConfig;

beforeAll(async () => {
  world = await startWorld();
  localUrl = world.server.serveLocalApi({ userID: ALICE });
  writes = world.server.serveLocalWrites();
});
afterAll(() => world.close());
beforeEach(() => {
  writes.keys.clear();
  writes.prompts.length = 0;
  world.server.clearLog();
});

const env = (extra: Record<string, string | undefined> = {}) =>
  world.env({ ZOTERO_API_KEY: undefined, ZOTEUS_LOCAL_API_URL: localUrl, ...extra });
const configFile = () => join(world.box.env.ZOT_CONFIG_DIR as string, 'config.json');
/** A person at a terminal. */
const atTerminal = (argv: string[], extra: Record<string, string | undefined> = {}) =>
  zotAt(argv, { env: env(extra), stdinTTY: true, stderrTTY: true });

describe('zot auth local', () => {
  it('refuses an agent (no TTY) with validation_error, asks Zotero nothing', async () => {
    const r = await zotAt(['auth', 'local', '--json'], { env: env() });
    expect(r.code).toBe(3);
    const error = (r.json() as { error: { code: string; message: string; hint: string } }).error;
    expect(error.code).toBe('validation_error');
    expect(error.message).toContain('for a person at a terminal');
    expect(error.hint).toContain('ZOTEUS_LOCAL_API_KEY');
    expect(world.server.log).toEqual([]);
  });

  it('"Always Allow": the key is stored in the profile (0600), redacted in the answer, and then used for writes', async () => {
    writes.answer = 'always';
    const r = await atTerminal(['auth', 'local', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('click "Always Allow"');
    const data = (r.json() as { data: Record<string, unknown> }).data;
    expect(data).toMatchObject({ saved: true, profile: 'default', localApiKey: '[REDACTED]' });
    const [key] = [...writes.keys.keys()];
    expect(r.stdout).not.toContain(key);
    const authorize = world.server.log.find((e) => e.path === '/api/local/authorize');
    expect(authorize?.body).toEqual({ appName: 'Zoteus' });
    expect(authorize?.headers['zotero-server-id']).toBe(writes.serverId);
    const file = JSON.parse(readFileSync(configFile(), 'utf8')) as {
      profiles: Record<string, { local_api_key?: string }>;
    };
    expect(file.profiles.default?.local_api_key).toBe(key);
    expect(statSync(configFile()).mode & 0o777).toBe(0o600);

    // An agent reads it for its environment; status shows it redacted.
    const got = await zotAt(['config', 'get', 'local_api_key'], { env: env() });
    expect(got.stdout).toBe(`${key}\n`);
    const status = await zotAt(['auth', 'status', '--json'], { env: env() });
    expect((status.json() as { data: Record<string, unknown> }).data).toMatchObject({
      localApiKey: '[REDACTED]',
      source: 'profile',
      writes: 'auto',
      desktop: { state: 'writable' },
    });
    expect(status.stdout).not.toContain(key);

    // Logout forgets it.
    const out = await zotAt(['auth', 'logout', '--json'], { env: env() });
    expect((out.json() as { data: Record<string, unknown> }).data).toMatchObject({ removed: true });
    const after = JSON.parse(readFileSync(configFile(), 'utf8')) as {
      profiles: Record<string, { local_api_key?: string }>;
    };
    expect(after.profiles.default?.local_api_key).toBeUndefined();
  });

  it('"Allow" (one-time): not saved, and says why', async () => {
    writes.answer = 'allow';
    const r = await atTerminal(['auth', 'local', '--json']);
    expect(r.code).toBe(3);
    const error = (r.json() as { error: { code: string; message: string; hint: string } }).error;
    expect(error.message).toContain('one-time key');
    expect(error.hint).toContain('Always Allow');
  });

  it('"Deny": permission_denied', async () => {
    writes.answer = 'deny';
    const r = await atTerminal(['auth', 'local', '--json']);
    expect(r.code).toBe(2);
    expect((r.json() as { error: { code: string } }).error.code).toBe('permission_denied');
  });

  it('too many prompts in a minute: rate_limited with the wait', async () => {
    writes.answer = 'deny';
    for (let i = 0; i < 5; i++) await atTerminal(['auth', 'local', '--json']);
    const r = await atTerminal(['auth', 'local', '--json']);
    const error = (r.json() as { error: { code: string; retry_after_seconds?: number } }).error;
    expect(error.code).toBe('rate_limited');
    expect(error.retry_after_seconds).toBe(60);
  });
});
