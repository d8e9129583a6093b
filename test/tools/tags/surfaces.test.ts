/**
 * `zot tag audit` as a subprocess (needs `npm run build`) on the crafted zotero.sqlite with no
 * API key, and `zotero_tag_audit` over MCP in read-only mode.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelope, structured, texts, type Mcp } from '../items/read/setup.js';
import { K, startCrafted, VOCABULARY, type Crafted } from './library.js';

let crafted: Crafted;
let vocabularyFile: string;
beforeAll(async () => {
  crafted = await startCrafted();
  vocabularyFile = join(crafted.dir, 'vocabulary.json');
  writeFileSync(vocabularyFile, JSON.stringify(VOCABULARY));
});
afterAll(async () => {
  await crafted.close();
});

describe('zot tag audit', () => {
  const scoped = {
    backend: 'sqlite',
    items: 3,
    scope: { collections: [K.climate, K.ice].sort() },
    missingTier: [
      { tier: 'method', count: 1, items: [K.b] },
      { tier: 'topic', count: 2, items: [K.b, K.c] },
    ],
  };

  it('--vocabulary FILE, --required-tiers and --collection-keys repeated: one envelope, no key needed', async () => {
    const r = await crafted.zot([
      'tag',
      'audit',
      '--vocabulary',
      vocabularyFile,
      '--required-tiers',
      'method',
      '--required-tiers',
      'topic',
      '--collection-keys',
      K.climate,
      '--include-subcollections',
      '--json',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const env = envelope(r);
    expect(env.ok).toBe(true);
    expect(env.data).toMatchObject(scoped);
    expect(env.data.suggestions).toContain("zot tag rename Ice-Sheets 'Ice Sheet'");
  });

  it("0.1.0's --required-tier and --scope JSON still work for 0.2.0, each with a notice on stderr", async () => {
    const r = await crafted.zot([
      'tag',
      'audit',
      '--vocabulary',
      vocabularyFile,
      '--required-tier',
      'method',
      '--required-tier',
      'topic',
      '--scope',
      JSON.stringify({ collection_keys: [K.climate], include_subcollections: true }),
      '--json',
    ]);
    expect(r.code).toBe(0);
    expect(envelope(r).data).toMatchObject(scoped);
    expect(r.stderr.trim().split('\n')).toEqual([
      'zot: --required-tier is deprecated; use --required-tiers (removed in 0.3.0).',
      'zot: --scope is deprecated; use --collection-keys and --include-subcollections (removed in 0.3.0).',
    ]);
    // Old and new spelling of one input, or a field --scope never had: usage errors.
    const both = await crafted.zot([
      'tag',
      'audit',
      '--vocabulary',
      vocabularyFile,
      '--required-tier',
      'method',
      '--required-tiers',
      'topic',
      '--json',
    ]);
    expect(both.code).toBe(3);
    expect(envelope(both).error).toMatchObject({ code: 'validation_error', field: 'required_tiers' });
    const odd = await crafted.zot([
      'tag',
      'audit',
      '--vocabulary',
      vocabularyFile,
      '--scope',
      '{"__proto__":{"x":1}}',
      '--json',
    ]);
    expect(odd.code).toBe(3);
    expect(envelope(odd).error.code).toBe('validation_error');
  });

  it('the old spellings are in neither --help nor zot schema', async () => {
    const help = await crafted.zot(['tag', 'audit', '--help']);
    expect(help.stdout).toContain('--required-tiers');
    expect(help.stdout).not.toMatch(/--required-tier\b(?!s)|--scope/);
    const schema = JSON.stringify((await crafted.zot(['schema', 'tag', 'audit', '--json'])).json());
    expect(schema).toContain('--collection-keys');
    expect(schema).not.toMatch(/--required-tier"|--scope/);
  });

  it('--vocabulary - reads stdin; the whole library without --collection-keys', async () => {
    const r = await crafted.zot(['tag', 'audit', '--vocabulary', '-'], JSON.stringify(VOCABULARY));
    expect(r.code).toBe(0);
    const env = envelope(r);
    expect(env.data).toMatchObject({ items: 7, scope: { collections: null }, missingTier: [] });
    expect(env.data.suggestions).toContain("zot tag rename DL 'Deep Learning'");
  });

  it('a bad vocabulary and an unknown collection exit with their codes', async () => {
    const bad = await crafted.zot(['tag', 'audit', '--vocabulary', '-', '--json'], '["A","A"]');
    expect(bad.code).toBe(3);
    expect(envelope(bad).error).toMatchObject({ code: 'validation_error', field: 'vocabulary' });
    const missing = await crafted.zot([
      'tag',
      'audit',
      '--vocabulary',
      vocabularyFile,
      '--collection-keys',
      'ZZZZ2345',
      '--json',
    ]);
    expect(missing.code).toBe(4);
    expect(envelope(missing).error.code).toBe('not_found');
  });

  it('is a read command in zot schema', async () => {
    const r = await crafted.zot(['schema', 'tag', 'audit', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.stringify(r.json())).toContain('zotero_tag_audit');
  });
});

describe('zotero_tag_audit over MCP', () => {
  let mcp: Mcp;
  beforeAll(async () => {
    mcp = await crafted.mcp();
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it('is offered in read-only mode and answers with a summary and structuredContent', async () => {
    expect(await mcp.listTools()).toContain('zotero_tag_audit');
    const r = await mcp.call('zotero_tag_audit', {
      vocabulary: VOCABULARY,
      required_tiers: ['method'],
      collection_keys: [K.ml],
    });
    expect(r.isError).toBeFalsy();
    expect(texts(r)[0]).toBe(
      'Audited 6 tags on 2 items (sqlite): 4 unknown tags, 1 synonym, 1 near-duplicate group, 0 items without a "method" tag; 3 suggested commands.',
    );
    expect(structured(r)).toMatchObject({
      items: 2,
      synonyms: [{ tag: 'DL', preferred: 'Deep Learning', items: 1 }],
      // MCP names the call in its own terms.
      suggestions: expect.arrayContaining([
        'zotero_manage_tags (action: rename, tag: DL, new_name: Deep Learning)',
      ]),
      provenance: expect.any(String),
    });
  });

  it('an invalid vocabulary is an isError result', async () => {
    const r = await mcp.call('zotero_tag_audit', { vocabulary: [] });
    expect(r.isError).toBe(true);
  });

  it("has no aliases: 0.1.0's scope is an unknown argument", async () => {
    const r = await mcp.call('zotero_tag_audit', {
      vocabulary: VOCABULARY,
      scope: { collection_keys: [K.ml] },
    });
    expect(r.isError).toBe(true);
    expect(texts(r)[0]).toMatch(/^validation_error: .*scope/);
  });
});
