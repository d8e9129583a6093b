/** --stream, progress, and the config commands. */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FIXTURE_ZOT, runZot, sandbox } from '../../support/cli.js';

const KEY = 'AbCdEfGhIjKlMnOpQrStUvWx';
let box: ReturnType<typeof sandbox>;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());

describe('--stream', () => {
  it('prints one NDJSON line per row of the page, then a summary line with count, total and has_more', async () => {
    const r = await runZot(['fixture', 'list', '--count', '5', '--limit', '2', '--start', '1', '--stream'], {
      env: box.env,
      bin: FIXTURE_ZOT,
    });
    expect(r.code).toBe(0);
    const lines = r.lines();
    expect(lines).toHaveLength(3);
    expect(lines[0]).toEqual({ ok: true, data: { key: 'ROW22222', name: 'Row 1', numItems: 10 } });
    expect(lines[1]).toEqual({ ok: true, data: { key: 'ROW22222', name: 'Row 2', numItems: 20 } });
    const summary = lines[2] as Record<string, unknown>;
    expect(Object.keys(summary)).toEqual(['ok', 'summary', 'meta']);
    expect(summary.summary).toEqual({ count: 2, total: 5, has_more: true });
  });

  it('has_more is false on the last page, and streams are JSON even in table mode', async () => {
    const r = await runZot(['fixture', 'list', '--count', '2', '--stream'], {
      env: { ...box.env, ZOT_FORMAT: 'table' },
      bin: FIXTURE_ZOT,
    });
    const lines = r.lines();
    expect(lines.at(-1)?.summary).toEqual({ count: 2, total: 2, has_more: false });
  });

  it('an error mid-stream ends it with an error envelope and its exit code', async () => {
    const r = await runZot(['fixture', 'list', '--limit', '0', '--stream'], {
      env: box.env,
      bin: FIXTURE_ZOT,
    });
    expect(r.code).toBe(3);
    expect(r.lines().at(-1)?.ok).toBe(false);
  });

  it('progress events go to stderr while stdout keeps only envelopes', async () => {
    const r = await runZot(['fixture', 'list', '--stream'], { env: box.env, bin: FIXTURE_ZOT });
    const events = r.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; phase: string });
    expect(events.map((e) => `${e.event}:${e.phase}`)).toEqual(['start:list', 'complete:list']);
    for (const line of r.stdout.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('a progress bar replaces the events on a TTY, and is erased when the work completes', async () => {
    const r = await runZot(['fixture', 'batch', 'a', 'b'], { env: box.env, bin: FIXTURE_ZOT, tty: true });
    expect(r.stdout).toContain('\r[                              ] 0/2 batch_add\r\u001b[K');
    expect(r.stdout).not.toContain('"event"');
  });
});

describe('zot config', () => {
  it('show prints the effective configuration with the key redacted and the sources', async () => {
    const r = await runZot(['config', 'show'], {
      env: { ...box.env, ZOTERO_API_KEY: KEY, ZOTERO_LIBRARY_ID: '5', ZOTERO_API_URL: undefined },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(KEY);
    const data = r.json().data as Record<string, unknown>;
    expect(data.apiKey).toBe('[REDACTED]');
    expect(data.library).toEqual({ id: 5, type: 'user' });
    expect(data.sources).toMatchObject({ apiKey: 'env', libraryId: 'env', apiUrl: 'default' });
  });

  it('show names the embeddings settings and redacts their key, which appears nowhere in the output', async () => {
    const secret = 'sk-Q7vX2mT9pL4nR8wK3jH6zD1c';
    const r = await runZot(['config', 'show'], {
      env: { ...box.env, ZOTEUS_EMBEDDINGS: 'openai', ZOTEUS_EMBEDDINGS_API_KEY: secret },
    });
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(secret);
    expect(r.json().data).toMatchObject({
      embeddings: 'openai',
      embeddingsUrl: 'https://api.openai.com/v1',
      embeddingsModel: 'text-embedding-3-small',
      embeddingsApiKey: '[REDACTED]',
      embeddingsBatch: 64,
      indexAutoMinItems: 2000,
    });
  });

  it('show names the citation and resolver settings', async () => {
    const r = await runZot(['config', 'show'], {
      env: { ...box.env, ZOTEUS_CITATION_STYLE: 'ieee', ZOTEUS_STYLES_URL: 'http://127.0.0.1:9/s' },
    });
    expect(r.code).toBe(0);
    expect(r.json().data).toMatchObject({
      citations: {
        style: 'ieee',
        stylesUrl: 'http://127.0.0.1:9/s',
        localesUrl: 'http://127.0.0.1:9/locales',
      },
      resolvers: { crossref: 'http://127.0.0.1:9/crossref', arxiv: 'http://127.0.0.1:9/arxiv' },
    });
  });

  it('get prints one raw value for shell profiles, the key included because it was asked for', async () => {
    const key = await runZot(['config', 'get', 'api_key'], { env: { ...box.env, ZOTERO_API_KEY: KEY } });
    expect(key).toMatchObject({ code: 0, stdout: `${KEY}\n` });
    const id = await runZot(['config', 'get', 'library_id'], { env: { ...box.env, ZOT_LIBRARY_ID: '42' } });
    expect(id.stdout).toBe('42\n');
    const json = await runZot(['config', 'get', 'library_type', '--json'], { env: box.env });
    expect(json.json().data).toEqual({ name: 'library_type', value: 'user' });
  });

  it('get of an unknown name is a validation_error', async () => {
    const r = await runZot(['config', 'get', 'password'], { env: box.env });
    expect(r.code).toBe(3);
  });

  it('get of an unset value prints nothing and exits 4', async () => {
    const r = await runZot(['config', 'get', 'api_key'], { env: box.env });
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('api_key is not set');
  });

  it('init refuses on a non-TTY and says which variables to set', async () => {
    const r = await runZot(['config', 'init'], { env: box.env });
    expect(r.code).toBe(3);
    const error = r.json().error as { code: string; hint: string };
    expect(error.code).toBe('validation_error');
    expect(error.hint).toContain('ZOTERO_API_KEY');
    expect(existsSync(join(box.env.ZOT_CONFIG_DIR as string, 'config.json'))).toBe(false);
  });

  it('init on a TTY asks, writes a 0600 file, and the profile is then used', async () => {
    const answers = ['123456', 'user', '', KEY, ''].join('\n') + '\n';
    const r = await runZot(['config', 'init', '--profile', 'work'], {
      env: { ...box.env, ZOT_FORMAT: 'json' },
      tty: true,
      stdin: answers,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(`"${KEY}"`);
    const path = join(box.env.ZOT_CONFIG_DIR as string, 'config.json');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const file = JSON.parse(readFileSync(path, 'utf8')) as {
      default_profile: string;
      profiles: Record<string, Record<string, string>>;
    };
    expect(file.default_profile).toBe('work');
    expect(file.profiles.work).toMatchObject({ library_id: '123456', library_type: 'user', api_key: KEY });
    const who = await runZot(['whoami', '--profile', 'work'], { env: box.env });
    expect((who.json().data as { library: { id: number } }).library.id).toBe(123456);
    const viaEnv = await runZot(['config', 'get', 'library_id'], {
      env: { ...box.env, ZOT_PROFILE: 'work' },
    });
    expect(viaEnv.stdout).toBe('123456\n');
  });

  it('an unknown --profile is a validation_error', async () => {
    const r = await runZot(['whoami', '--profile', 'ghost'], { env: box.env });
    expect(r.code).toBe(3);
    expect((r.json().error as { message: string }).message).toContain("Profile 'ghost'");
  });
});

describe('options that read a file or stdin', () => {
  it('reads JSON from a file, or from stdin with -', async () => {
    const { writeFileSync } = await import('node:fs');
    const path = join(box.dir, 'rows.json');
    writeFileSync(path, JSON.stringify([{ a: 1 }, { a: 2 }]));
    const fromFile = await runZot(['fixture', 'sum', '--rows', path], { env: box.env, bin: FIXTURE_ZOT });
    expect(fromFile.json().data).toEqual({ sum: 3 });
    const fromStdin = await runZot(['fixture', 'sum', '--rows', '-'], {
      env: box.env,
      bin: FIXTURE_ZOT,
      stdin: '[{"a":5}]',
    });
    expect(fromStdin.json().data).toEqual({ sum: 5 });
  });

  it('a missing file or invalid JSON is a validation_error naming the flag', async () => {
    const missing = await runZot(['fixture', 'sum', '--rows', join(box.dir, 'nope.json')], {
      env: box.env,
      bin: FIXTURE_ZOT,
    });
    expect(missing.code).toBe(3);
    expect(missing.json().error).toMatchObject({ code: 'validation_error', field: 'rows' });
    const bad = await runZot(['fixture', 'sum', '--rows', '-'], {
      env: box.env,
      bin: FIXTURE_ZOT,
      stdin: '[{"a":',
    });
    expect(bad.code).toBe(3);
    expect((bad.json().error as { message: string }).message).toMatch(/^--rows: stdin is not valid JSON/);
  });

  it('content that breaks the schema names the field', async () => {
    const r = await runZot(['fixture', 'sum', '--rows', '-'], {
      env: box.env,
      bin: FIXTURE_ZOT,
      stdin: '[{"a":1,"b":2}]',
    });
    expect(r.code).toBe(3);
    expect(r.json().error).toMatchObject({ code: 'validation_error', field: 'rows' });
  });
});
