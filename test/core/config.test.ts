import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';

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
