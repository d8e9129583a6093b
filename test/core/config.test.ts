import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonErrorOffset, loadConfig } from '../../src/core/config.js';
import type { ZoteusError } from '../../src/core/errors.js';

let dir: string;
let env: Record<string, string>;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cfg-'));
  env = { HOME: dir, ZOT_CONFIG_DIR: join(dir, 'cfg') };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const writeFile = (content: unknown) => {
  mkdirSync(join(dir, 'cfg'), { recursive: true });
  writeFileSync(join(dir, 'cfg', 'config.json'), JSON.stringify(content));
};

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig(env, {});
    expect(c).toMatchObject({
      apiKey: undefined,
      libraryId: undefined,
      libraryType: 'user',
      apiUrl: 'https://api.zotero.org',
      local: 'auto',
      compileCache: 'on',
      indexFulltext: false,
      embeddings: 'off',
      readOnly: false,
      confirmBulkWrites: 0,
      allowDelete: false,
      maxCollections: 100_000,
      retryBudgetMs: 60_000,
      zoteroDataDir: join(dir, 'Zotero'),
    });
  });

  it.each([
    ['ZOTEUS_READ_ONLY', 'maybe'],
    ['ZOTEUS_ALLOW_DELETE', '2'],
    ['ZOTEUS_CONFIRM_BULK_WRITES', '-1'],
    ['ZOTEUS_MAX_COLLECTIONS', '0'],
    ['ZOTEUS_RETRY_BUDGET_MS', 'soon'],
    ['ZOTEUS_LOCAL', 'sometimes'],
    ['ZOTEUS_COMPILE_CACHE', 'no'],
    ['ZOTEUS_EMBEDDINGS', 'gpt'],
    ['ZOTEUS_EMBEDDINGS_URL', 'localhost:11434'],
    ['ZOTEUS_EMBEDDINGS_URL', 'ftp://example'],
    ['ZOTEUS_EMBEDDINGS_BATCH', '0'],
    ['ZOTEUS_EMBEDDINGS_BATCH', 'many'],
    ['ZOTERO_LIBRARY_TYPE', 'team'],
    ['ZOTERO_LIBRARY_ID', 'abc'],
    ['ZOTERO_API_URL', 'ftp://example'],
    ['ZOT_FORMAT', 'xml'],
  ])('%s=%s is a startup error naming the variable', (name, value) => {
    expect(() => loadConfig({ ...env, [name]: value })).toThrow(
      expect.objectContaining({ code: 'validation_error', field: name }),
    );
  });

  it('takes the aliases ZOT_API_KEY and ZOT_LIBRARY_ID', () => {
    const c = loadConfig({ ...env, ZOT_API_KEY: 'abcdefgh12345678', ZOT_LIBRARY_ID: '12' });
    expect(c.apiKey).toBe('abcdefgh12345678');
    expect(c.libraryId).toBe(12);
  });

  it('reads the default profile, lets ZOT_PROFILE and --profile select, and env overrides the file', () => {
    writeFile({
      default_profile: 'home',
      profiles: {
        home: { library_id: '1', api_key: 'homekey123456789' },
        lab: { library_id: 2, library_type: 'group', api_url: 'http://127.0.0.1:9/' },
      },
    });
    expect(loadConfig(env).libraryId).toBe(1);
    const lab = loadConfig({ ...env, ZOT_PROFILE: 'lab' });
    expect(lab).toMatchObject({
      libraryId: 2,
      libraryType: 'group',
      apiUrl: 'http://127.0.0.1:9',
      profile: 'lab',
    });
    expect(loadConfig({ ...env, ZOT_PROFILE: 'lab' }, { profile: 'home' }).libraryId).toBe(1);
    const overridden = loadConfig({ ...env, ZOTERO_LIBRARY_ID: '7' });
    expect(overridden.libraryId).toBe(7);
    expect(overridden.sources).toMatchObject({ libraryId: 'env', apiKey: 'profile', apiUrl: 'default' });
  });

  it('an unknown profile is a validation_error listing the known ones', () => {
    writeFile({ profiles: { home: {} } });
    expect(() => loadConfig(env, { profile: 'nope' })).toThrow(/Profile 'nope'/);
  });

  it('a corrupt config file is a clear error', () => {
    mkdirSync(join(dir, 'cfg'), { recursive: true });
    writeFileSync(join(dir, 'cfg', 'config.json'), '{not json');
    expect(() => loadConfig(env)).toThrow(/is not valid/);
  });

  describe('a config file that is not JSON', () => {
    const KEY = 'Pr0f1leK3y-Abc123Def456';
    const failure = (text: string): ZoteusError => {
      mkdirSync(join(dir, 'cfg'), { recursive: true });
      writeFileSync(join(dir, 'cfg', 'config.json'), text);
      try {
        loadConfig(env);
      } catch (error) {
        return error as ZoteusError;
      }
      throw new Error('expected a rejection');
    };
    const everything = (e: ZoteusError) =>
      `${e.message}\n${e.hint ?? ''}\n${JSON.stringify(e)}\n${e.stack ?? ''}`;

    it.each([
      // The key without quotes: JSON.parse's own message quotes the text around it.
      [`{\n  "profiles": {\n    "home": { "api_key": ${KEY} }\n  }\n}\n`, 3, 26],
      [`{"profiles": {"home": {"api_key": "${KEY}" "library_id": 1}}}`, 1, 61],
      [`{"profiles": {"home": {"api_key": "${KEY}",}}}`, 1, 61],
      [`{"profiles": {"home": {"api_key": "${KEY}"`, 1, 60],
    ])('names the file, line and column, never its text (%#)', (text, line, column) => {
      const error = failure(text);
      expect(error.code).toBe('validation_error');
      expect(error.message).toBe(
        `The config file ${join(dir, 'cfg', 'config.json')} is not valid JSON (line ${line}, column ${column}).`,
      );
      for (let i = 0; i + 8 <= KEY.length; i++) expect(everything(error)).not.toContain(KEY.slice(i, i + 8));
      expect(everything(error)).not.toContain('api_key');
    });

    it('valid JSON without a profiles object is refused without quoting it', () => {
      const error = failure(`{"api_key": "${KEY}"}`);
      expect(error.message).toMatch(/is not valid \(no "profiles" object\)/);
      expect(everything(error)).not.toContain(KEY.slice(0, 8));
    });
  });

  it('jsonErrorOffset finds the first character that breaks JSON', () => {
    const cases: Array<[string, number]> = [
      ['{"a":1,}', 7],
      ['{"a" 1}', 5],
      ['[1,2', 4],
      ['{"a":"b\\x"}', 8],
      ['{"a":"b\nc"}', 7],
      ['[01]', 2],
      ['[1.]', 3],
      ['[-]', 2],
      ['[1e+]', 4],
      ['{"a":tru}', 5],
      ['  ', 2],
      ['{"a":[1,{"b":nul}]}', 13],
      ['"\\u12G4"', 5],
      ['[1 2]', 3],
      ['{"a":1,"b"}', 10],
      ['[] []', 3],
      ['\uFEFF{}', 0],
      ['['.repeat(100_000), 100_000],
    ];
    for (const [text, offset] of cases)
      expect([text.slice(0, 20), jsonErrorOffset(text)]).toEqual([text.slice(0, 20), offset]);
  });

  describe('the Zotero API key', () => {
    it('accepts any printable key of 8 to 256 characters: hyphens, dots, underscores, punctuation', () => {
      for (const key of ['zk-7Hq2-Wm9x-Lp4R-tV8n-Bc3D', 'a.b_c~d+e/f=g!h', 'Ab3dEf6h', 'x'.repeat(256)]) {
        expect(loadConfig({ ...env, ZOTERO_API_KEY: key }).apiKey).toBe(key);
      }
      expect(loadConfig({ ...env, ZOT_API_KEY: 'zk-7Hq2-Wm9x' }).apiKey).toBe('zk-7Hq2-Wm9x');
    });

    it.each([
      ['short', 'zk-7Hq2', /too short \(7 characters/],
      ['long', 'k'.repeat(257), /too long \(257 characters; at most 256\)/],
      ['with a space', 'zk-7Hq2 Wm9x-Lp4R', /malformed \(expected printable ASCII/],
      ['non-ASCII', 'zk-7Hq2-Wm9x-Lp4R-é', /malformed/],
      ['with a control character', 'zk-7Hq2\u0007Wm9x-Lp4R', /malformed/],
    ])('refuses a %s key, naming the variable it came from, never echoing it', (_what, key, problem) => {
      for (const name of ['ZOTERO_API_KEY', 'ZOT_API_KEY']) {
        const attempt = () => loadConfig({ ...env, [name]: key });
        expect(attempt).toThrow(expect.objectContaining({ code: 'validation_error', field: name }));
        expect(attempt).toThrow(problem);
        try {
          attempt();
        } catch (error) {
          const text = `${String(error)} ${JSON.stringify(error)} ${(error as Error).stack ?? ''}`;
          expect(text).not.toContain(key.slice(0, 7));
        }
      }
    });

    it('a short api_key in the profile names the profile and the file', () => {
      writeFile({ default_profile: 'home', profiles: { home: { api_key: 'abc' } } });
      expect(() => loadConfig(env)).toThrow(
        expect.objectContaining({
          field: 'ZOTERO_API_KEY',
          message: expect.stringMatching(/^The api_key of profile 'home' in .*config\.json is too short/),
        }),
      );
    });
  });

  describe('embeddings', () => {
    it('are off by default, with the URL and model unset', () => {
      expect(loadConfig(env)).toMatchObject({
        embeddings: 'off',
        embeddingsUrl: undefined,
        embeddingsModel: undefined,
        embeddingsApiKey: undefined,
        embeddingsBatch: 64,
      });
    });

    it.each([
      ['openai', 'https://api.openai.com/v1', 'text-embedding-3-small'],
      ['ollama', 'http://127.0.0.1:11434', 'nomic-embed-text'],
    ])('%s defaults to %s and %s', (provider, url, model) => {
      expect(loadConfig({ ...env, ZOTEUS_EMBEDDINGS: provider })).toMatchObject({
        embeddings: provider,
        embeddingsUrl: url,
        embeddingsModel: model,
        embeddingsBatch: 64,
      });
    });

    it('takes the URL (without a trailing slash), model and batch size', () => {
      const c = loadConfig({
        ...env,
        ZOTEUS_EMBEDDINGS: 'OpenAI',
        ZOTEUS_EMBEDDINGS_URL: 'http://127.0.0.1:8080/v1/',
        ZOTEUS_EMBEDDINGS_MODEL: 'bge-m3',
        ZOTEUS_EMBEDDINGS_BATCH: '16',
      });
      expect(c).toMatchObject({
        embeddings: 'openai',
        embeddingsUrl: 'http://127.0.0.1:8080/v1',
        embeddingsModel: 'bge-m3',
        embeddingsBatch: 16,
      });
    });

    it('takes the key from ZOTEUS_EMBEDDINGS_API_KEY, else OPENAI_API_KEY', () => {
      const both = { ...env, ZOTEUS_EMBEDDINGS: 'openai', OPENAI_API_KEY: 'sk-from-openai-var' };
      expect(loadConfig(both).embeddingsApiKey).toBe('sk-from-openai-var');
      expect(loadConfig({ ...both, ZOTEUS_EMBEDDINGS_API_KEY: 'sk-from-zoteus-var' }).embeddingsApiKey).toBe(
        'sk-from-zoteus-var',
      );
    });

    it('an embeddings key shorter than 8 characters is refused at startup, naming the variable', () => {
      for (const [name, extra] of [
        ['ZOTEUS_EMBEDDINGS_API_KEY', {}],
        ['OPENAI_API_KEY', { ZOTEUS_EMBEDDINGS: 'openai' }],
      ] as const) {
        const attempt = () => loadConfig({ ...env, ...extra, [name]: 'sk-1234' });
        expect(attempt).toThrow(expect.objectContaining({ code: 'validation_error', field: name }));
        expect(attempt).toThrow(/too short \(7 characters; at least 8/);
        expect(attempt).not.toThrow(/sk-1234/);
      }
      expect(loadConfig({ ...env, ZOTEUS_EMBEDDINGS_API_KEY: 'sk-12345' }).embeddingsApiKey).toBe('sk-12345');
    });

    it('a malformed key is a validation_error that does not echo it', () => {
      const key = 'sk-has a-space-SECRET';
      const attempt = () => loadConfig({ ...env, ZOTEUS_EMBEDDINGS_API_KEY: key });
      expect(attempt).toThrow(
        expect.objectContaining({ code: 'validation_error', field: 'ZOTEUS_EMBEDDINGS_API_KEY' }),
      );
      try {
        attempt();
      } catch (error) {
        expect(JSON.stringify(error) + String(error)).not.toContain('SECRET');
      }
    });

    it('OPENAI_API_KEY is checked only when the openai provider would send it', () => {
      const odd = { ...env, OPENAI_API_KEY: 'sk odd value' };
      expect(loadConfig(odd).embeddingsApiKey).toBe('sk odd value');
      expect(() => loadConfig({ ...odd, ZOTEUS_EMBEDDINGS: 'openai' })).toThrow(
        expect.objectContaining({ code: 'validation_error', field: 'OPENAI_API_KEY' }),
      );
    });

    it('a URL with credentials is refused without echoing them', () => {
      expect(() => loadConfig({ ...env, ZOTEUS_EMBEDDINGS_URL: 'https://user:pass@example.com' })).toThrow(
        expect.objectContaining({
          field: 'ZOTEUS_EMBEDDINGS_URL',
          message: expect.not.stringContaining('pass'),
        }),
      );
    });
  });
});
