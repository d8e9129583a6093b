/** The CLI contract as an agent sees it: envelopes, exit codes, channels, formats. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FIXTURE_ZOT, runZot, sandbox } from '../../support/cli.js';

const FAKE_KEY = 'AbCdEfGhIjKlMnOpQrStUvWx';
let box: ReturnType<typeof sandbox>;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());

const META_KEYS = ['schema_version', 'cli_version', 'request_id', 'latency_ms'];

describe('success envelope', () => {
  it('zot whoami on a pipe prints exactly one JSON envelope with data and meta', async () => {
    const r = await runZot(['whoami'], { env: box.env });
    expect(r.code).toBe(0);
    expect(r.stdout.endsWith('\n')).toBe(true);
    const env = r.json();
    expect(Object.keys(env)).toEqual(['ok', 'data', 'meta']);
    expect(env.ok).toBe(true);
    const meta = env.meta as Record<string, unknown>;
    expect(Object.keys(meta)).toEqual(META_KEYS);
    expect(meta.schema_version).toBe('1.0.0');
    expect(meta.cli_version).toBe('0.2.0');
    expect(meta.request_id).toMatch(/^[0-9a-f]{12}$/);
    expect(typeof meta.latency_ms).toBe('number');
    const data = env.data as Record<string, unknown>;
    expect(data.version).toBe('0.2.0');
    expect(data.readOnly).toBe(false);
    expect(data.library).toEqual({
      type: 'user',
      id: null,
      source: 'desktop',
      description: "the desktop app's personal library",
    });
    expect(r.stderr).toBe('');
  });

  it('each invocation gets its own request_id', async () => {
    const [a, b] = await Promise.all([
      runZot(['whoami'], { env: box.env }),
      runZot(['whoami'], { env: box.env }),
    ]);
    expect((a.json().meta as { request_id: string }).request_id).not.toBe(
      (b.json().meta as { request_id: string }).request_id,
    );
  });

  it('reports the configured library from ZOTERO_LIBRARY_ID and ZOT_LIBRARY_ID', async () => {
    const r = await runZot(['whoami'], {
      env: { ...box.env, ZOT_LIBRARY_ID: '4242', ZOTERO_LIBRARY_TYPE: 'group' },
    });
    expect((r.json().data as { library: unknown }).library).toEqual({
      type: 'group',
      id: 4242,
      source: 'config',
      description: 'groups/4242',
    });
  });

  it('zot --version prints the bare version and exits 0', async () => {
    const r = await runZot(['--version'], { env: box.env });
    expect(r).toMatchObject({ code: 0, stdout: '0.2.0\n', stderr: '' });
  });
});

describe('usage errors are validation_error envelopes with exit 3', () => {
  it('an unknown flag', async () => {
    const r = await runZot(['whoami', '--bogus'], { env: box.env });
    expect(r.code).toBe(3);
    const env = r.json();
    expect(env.ok).toBe(false);
    expect(env.error).toEqual({
      code: 'validation_error',
      message: 'Unknown flag --bogus for `zot whoami`.',
      retryable: false,
      hint: 'Run `zot whoami --help` for the accepted flags.',
      field: '--bogus',
    });
    expect(Object.keys(env.meta as object)).toEqual(META_KEYS);
    expect(r.stderr).toBe('');
  });

  it('an unknown command', async () => {
    const r = await runZot(['frobnicate'], { env: box.env });
    expect(r.code).toBe(3);
    expect((r.json().error as { code: string; message: string }).message).toBe(
      "Unknown command 'frobnicate' for `zot`.",
    );
  });

  it('an unexpected positional argument', async () => {
    const r = await runZot(['whoami', 'extra'], { env: box.env });
    expect(r.code).toBe(3);
    expect((r.json().error as { message: string }).message).toBe(
      "Unexpected argument 'extra' for `zot whoami`.",
    );
  });

  it('a number flag given text', async () => {
    const r = await runZot(['fixture', 'list', '--count', 'many'], { env: box.env, bin: FIXTURE_ZOT });
    expect(r.code).toBe(3);
    expect(r.json().error).toMatchObject({
      code: 'validation_error',
      field: 'count',
      message: "--count must be a whole number from 0 to 10,000 (got 'many').",
    });
  });

  it('a value out of the schema bounds names the flag', async () => {
    const r = await runZot(['fixture', 'list', '--limit', '0'], { env: box.env, bin: FIXTURE_ZOT });
    expect(r.code).toBe(3);
    const error = r.json().error as { field: string; message: string };
    expect(error.field).toBe('limit');
    expect(error.message).toBe('--limit must be a whole number from 1 to 1,000 (got 0).');
  });

  it('an enum flag outside its choices', async () => {
    const r = await runZot(['fixture', 'list', '--mode', 'huge'], { env: box.env, bin: FIXTURE_ZOT });
    expect(r.code).toBe(3);
    expect((r.json().error as { field: string }).field).toBe('mode');
  });

  it('a malformed key is validation_error (exit 3), never not_found', async () => {
    const r = await runZot(['fixture', 'destroy', 'NOPE', '--yes'], { env: box.env, bin: FIXTURE_ZOT });
    expect(r.code).toBe(3);
    expect(r.json().error).toMatchObject({ code: 'validation_error', field: 'key' });
  });

  it('a missing required positional', async () => {
    const r = await runZot(['fixture', 'write'], { env: box.env, bin: FIXTURE_ZOT });
    expect(r.code).toBe(3);
    expect(r.json().error).toMatchObject({ code: 'validation_error', field: 'text' });
  });
});

describe('failures', () => {
  it('an uncaught error is internal_error, exit 1, with no stack trace anywhere on stdout', async () => {
    const r = await runZot(['fixture', 'crash'], { env: box.env, bin: FIXTURE_ZOT });
    expect(r.code).toBe(1);
    const env = r.json();
    expect(env.error).toMatchObject({ code: 'internal_error', retryable: false });
    expect((env.error as { message: string }).message).toContain('boom at the bottom of a stack');
    expect(r.stdout).not.toMatch(/\n\s+at /);
    expect(r.stdout).not.toContain('.js:');
  });

  it('output that breaks its own schema is internal_error, not a success', async () => {
    const r = await runZot(['fixture', 'bad-output'], { env: box.env, bin: FIXTURE_ZOT });
    expect(r.code).toBe(1);
    expect((r.json().error as { code: string }).code).toBe('internal_error');
  });

  it('an API key never reaches stdout or stderr, in either format', async () => {
    for (const format of ['json', 'table']) {
      const r = await runZot(['fixture', 'secret'], {
        env: { ...box.env, ZOTERO_API_KEY: FAKE_KEY, ZOT_FORMAT: format },
        bin: FIXTURE_ZOT,
      });
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).not.toContain(FAKE_KEY);
      expect(r.stdout + r.stderr).toContain('[REDACTED]');
    }
  });

  it('an unusable environment value is a validation_error naming the variable', async () => {
    const r = await runZot(['whoami'], { env: { ...box.env, ZOTEUS_READ_ONLY: 'maybe' } });
    expect(r.code).toBe(3);
    expect(r.json().error).toMatchObject({
      code: 'validation_error',
      field: 'ZOTEUS_READ_ONLY',
      message: "ZOTEUS_READ_ONLY must be true or false; got 'maybe'.",
    });
  });

  it('a malformed API key is refused without echoing it', async () => {
    const r = await runZot(['whoami'], { env: { ...box.env, ZOTERO_API_KEY: 'bad key!!secret' } });
    expect(r.code).toBe(3);
    expect(r.stdout).not.toContain('secret');
    expect((r.json().error as { field: string }).field).toBe('ZOTERO_API_KEY');
  });
});

describe('formats', () => {
  it('ZOT_FORMAT=table renders a table on a pipe; errors go to stderr as Error/Hint', async () => {
    const ok = await runZot(['fixture', 'list'], {
      env: { ...box.env, ZOT_FORMAT: 'table' },
      bin: FIXTURE_ZOT,
    });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe(
      [
        'key       name   numItems',
        '--------  -----  --------',
        'ROW22222  Row 0  0',
        'ROW22222  Row 1  10',
        'ROW22222  Row 2  20',
        '3 of 3 rows.',
        '',
      ].join('\n'),
    );
    const bad = await runZot(['fixture', 'list', '--count', 'x'], {
      env: { ...box.env, ZOT_FORMAT: 'table' },
      bin: FIXTURE_ZOT,
    });
    expect(bad.code).toBe(3);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain("Error: --count must be a whole number from 0 to 10,000 (got 'x').\nHint: ");
  });

  it('--json wins over ZOT_FORMAT=table', async () => {
    const r = await runZot(['whoami', '--json'], { env: { ...box.env, ZOT_FORMAT: 'table' } });
    expect(r.json().ok).toBe(true);
  });

  it('on a pseudo-TTY the output is a table; ZOT_FORMAT=json forces JSON there', async () => {
    const table = await runZot(['whoami'], { env: box.env, tty: true });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^version\s+0\.2\.0\r?$/m);
    expect(table.stdout).toMatch(/^library\.source\s+desktop\r?$/m);
    expect(table.stdout.trim().startsWith('{')).toBe(false);
    const json = await runZot(['whoami'], { env: { ...box.env, ZOT_FORMAT: 'json' }, tty: true });
    expect(JSON.parse(json.stdout.trim()).ok).toBe(true);
  });

  it('colour only on a TTY and never with NO_COLOR', async () => {
    const colour = await runZot(['whoami'], { env: { ...box.env, NO_COLOR: undefined }, tty: true });
    expect(colour.stdout).toContain('\u001b[1m');
    const none = await runZot(['whoami'], { env: box.env, tty: true });
    expect(none.stdout).not.toContain('\u001b[');
    const pipe = await runZot(['whoami'], { env: { ...box.env, NO_COLOR: undefined, ZOT_FORMAT: 'table' } });
    expect(pipe.stdout).not.toContain('\u001b[');
  });

  it('an invalid ZOT_FORMAT is a validation_error', async () => {
    const r = await runZot(['whoami'], { env: { ...box.env, ZOT_FORMAT: 'yaml' } });
    expect(r.code).toBe(3);
    expect((r.json().error as { field: string }).field).toBe('ZOT_FORMAT');
  });
});

describe('help', () => {
  it('zot --help groups commands by tier and marks mutating ones', async () => {
    const r = await runZot(['--help'], { env: { ...box.env, ZOT_FORMAT: 'table' }, bin: FIXTURE_ZOT });
    expect(r.code).toBe(0);
    const out = r.stdout;
    const read = out.indexOf('Read commands:');
    const write = out.indexOf('Write commands (MUTATES LIBRARY):');
    const destructive = out.indexOf('Destructive commands (MUTATES LIBRARY):');
    expect(read).toBeGreaterThan(-1);
    expect(write).toBeGreaterThan(read);
    expect(destructive).toBeGreaterThan(write);
    expect(out.slice(read, write)).toContain('whoami');
    expect(out.slice(write, destructive)).toContain('fixture write');
    expect(out.slice(destructive)).toContain('fixture destroy');
  });

  it('a mutating command’s help carries MUTATES LIBRARY; a read command’s does not', async () => {
    const w = await runZot(['fixture', 'write', '--help'], {
      env: { ...box.env, ZOT_FORMAT: 'table' },
      bin: FIXTURE_ZOT,
    });
    expect(w.stdout).toContain('\nMUTATES LIBRARY\n');
    expect(w.stdout).toContain('--dry-run');
    expect(w.stdout).toContain('--idempotency-key');
    const r = await runZot(['whoami', '--help'], { env: { ...box.env, ZOT_FORMAT: 'table' } });
    expect(r.stdout).not.toContain('MUTATES LIBRARY');
    expect(r.stdout).toContain('Usage: zot whoami');
  });

  it('a group without a subcommand prints its commands', async () => {
    const r = await runZot(['config'], { env: { ...box.env, ZOT_FORMAT: 'table' } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('config get');
    expect(r.stdout).toContain('config show');
  });
});
