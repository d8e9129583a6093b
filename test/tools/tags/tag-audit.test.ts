/**
 * `zotero_tag_audit` on a crafted zotero.sqlite (no key): every finding kind, the scope, the
 * required tiers, and every suggestion parsed against the CLI tree.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { Deps } from '../../../src/core/tool.js';
import { buildTree } from '../../../src/surfaces/cli/tree.js';
import { checkSuggestion } from '../../../src/surfaces/cli/suggestions.js';
import { tools } from '../../../src/tools/index.js';
import auditTool from '../../../src/tools/tags/tag-audit.js';
import { K, startCrafted, VOCABULARY, type Crafted } from './library.js';
import { valueOnCli } from '../../support/refs.js';

type Out = z.infer<typeof auditTool.output>;

let crafted: Crafted;
let deps: Deps;
beforeAll(async () => {
  crafted = await startCrafted();
  deps = crafted.deps();
});
afterAll(async () => {
  await crafted.close();
});

async function audit(input: Record<string, unknown>): Promise<Out> {
  const out = await auditTool.run(auditTool.input.parse({ vocabulary: VOCABULARY, ...input }), deps);
  return auditTool.output.parse(out);
}

const root = buildTree(tools);

const tagsOf = (rows: Array<{ tag: string }>) => rows.map((r) => r.tag).sort();

describe('zotero_tag_audit on the whole library', () => {
  it('reports unknown tags, synonyms, near-duplicates and items missing a required tier', async () => {
    const out = await audit({ required_tiers: ['method', 'topic'] });
    expect(out).toMatchObject({ backend: 'sqlite', library: 'users/4242', complete: true, truncated: false });
    expect(out.scope.collections).toBeNull();
    // Top-level items outside the trash (the standalone note included); automatic tags skipped.
    expect(out.items).toBe(7);
    expect(out.synonyms).toEqual([{ tag: 'DL', preferred: 'Deep Learning', items: 1 }]);
    expect(out.unknown).toContainEqual({
      tag: 'sea level',
      items: 1,
      closest: 'Sea Level',
      match: 'variant',
    });
    expect(out.unknown).toContainEqual({
      tag: 'Ice-Sheets',
      items: 1,
      closest: 'Ice Sheet',
      match: 'variant',
    });
    expect(out.unknown).toContainEqual({
      tag: 'Neural Networks',
      items: 1,
      closest: 'Neural Network',
      match: 'variant',
    });
    expect(out.unknown).toContainEqual({
      tag: 'Neural Netwerk',
      items: 1,
      closest: 'Neural Network',
      match: 'similar',
    });
    expect(out.unknown).toContainEqual({ tag: 'scratch', items: 1 });
    expect(tagsOf(out.unknown)).not.toContain('Imported Subject');
    expect(tagsOf(out.unknown)).not.toContain('Trashed Only');
    expect(tagsOf(out.unknown)).not.toContain('Deep Learning');
    // Near-duplicates: case (vocabulary term kept), accents, plural (the most used, then first by name).
    const groups = Object.fromEntries(out.nearDuplicates.map((g) => [g.preferred, g]));
    expect(groups['Sea Level']).toEqual({
      preferred: 'Sea Level',
      inVocabulary: true,
      tags: [
        { tag: 'Sea Level', items: 1 },
        { tag: 'sea level', items: 1 },
      ],
    });
    expect(tagsOf(groups['Océan']!.tags)).toEqual(['Océan', 'ocean']);
    expect(tagsOf(groups.Transformers!.tags)).toEqual(['Transformers', 'transformer']);
    expect(out.totals).toEqual({
      unknown: out.unknown.length,
      synonyms: 1,
      nearDuplicates: 3,
      suggestions: 6,
    });
    // Tiers: synonyms count for their term's tier; the note is not a regular item.
    expect(out.missingTier).toEqual([
      { tier: 'method', count: 2, items: [K.b, K.f] },
      { tier: 'topic', count: 5, items: [K.b, K.c, K.d, K.e, K.f] },
    ]);
    // As the CLI shows them: core writes each as a reference to the rename call.
    expect(valueOnCli(out.suggestions).sort()).toEqual(
      [
        "zot tag rename DL 'Deep Learning'",
        "zot tag rename Ice-Sheets 'Ice Sheet'",
        "zot tag rename 'Neural Networks' 'Neural Network'",
        "zot tag rename 'sea level' 'Sea Level'",
        "zot tag rename ocean 'Océan'",
        'zot tag rename transformer Transformers',
      ].sort(),
    );
  });

  it('every suggestion parses against the CLI tree, as `zot tag rename OLD NEW`', async () => {
    const out = await audit({ include_automatic: true });
    expect(out.suggestions.length).toBeGreaterThan(0);
    for (const command of valueOnCli(out.suggestions)) {
      expect(checkSuggestion(root, command), command).toBe(true);
      expect(command).toMatch(/^zot tag rename /);
    }
    expect(checkSuggestion(root, "zot tag rename 'sea level' 'Sea Level' --library-id 5")).toBe(true);
  });

  it('renders findings and suggestions as text for the CLI table mode and MCP content', async () => {
    const input = auditTool.input.parse({ vocabulary: VOCABULARY, required_tiers: ['method'] });
    const text = auditTool.text!(valueOnCli(await audit({ required_tiers: ['method'] })), input) as string;
    expect(text.split('\n')[0]).toMatch(
      /^Audited 15 tags on 7 items \(sqlite\): 10 unknown tags, 1 synonym, 3 near-duplicate groups, 2 items without a "method" tag; 6 suggested commands\.$/,
    );
    expect(text).toContain('synonym   DL → Deep Learning (1 item)');
    expect(text).toContain('unknown   Neural Netwerk (1 item); close to Neural Network');
    expect(text).toContain(`no method: ${K.b} ${K.f}`);
    expect(text).toContain("  zot tag rename DL 'Deep Learning'");
  });

  it('automatic tags only with include_automatic', async () => {
    const out = await audit({ include_automatic: true });
    expect(out.unknown).toContainEqual({ tag: 'Imported Subject', items: 1 });
  });

  it('limit caps each list; totals and truncated tell', async () => {
    const out = await audit({ limit: 1, required_tiers: ['topic'] });
    expect(out.unknown).toHaveLength(1);
    expect(out.suggestions).toHaveLength(1);
    expect(out.missingTier[0]).toMatchObject({ count: 5, items: [K.b] });
    expect(out.totals.suggestions).toBe(6);
    expect(out.truncated).toBe(true);
  });

  it('refuses a tier no term has and a vocabulary that repeats itself', async () => {
    await expect(audit({ required_tiers: ['status'] })).rejects.toMatchObject({
      code: 'validation_error',
      field: 'required_tiers',
    });
    await expect(audit({ vocabulary: ['A', 'A'] })).rejects.toMatchObject({
      code: 'validation_error',
      field: 'vocabulary',
    });
  });
});

describe('zotero_tag_audit scoped to collections', () => {
  it('one collection, without and with its subcollections', async () => {
    const only = await audit({ collection_keys: [K.climate], required_tiers: ['topic'] });
    expect(only.scope.collections).toEqual([K.climate]);
    expect(only.items).toBe(2);
    expect(tagsOf(only.unknown)).toEqual(['Océan', 'ocean', 'sea level']);
    expect(only.synonyms).toEqual([]);
    expect(only.missingTier).toEqual([{ tier: 'topic', count: 1, items: [K.b] }]);

    const deep = await audit({ collection_keys: [K.climate], include_subcollections: true });
    expect(deep.scope.collections).toEqual([K.climate, K.ice].sort());
    expect(deep.items).toBe(3);
    expect(tagsOf(deep.unknown)).toContain('Ice-Sheets');
    expect(tagsOf(deep.unknown)).not.toContain('Neural Networks');
  });

  it('several collections; an unknown key is not_found', async () => {
    const out = await audit({ collection_keys: [K.ml, K.ice] });
    expect(out.items).toBe(3);
    expect(out.synonyms.map((s) => s.tag)).toEqual(['DL']);
    await expect(audit({ collection_keys: ['ZZZZ2345'] })).rejects.toMatchObject({
      code: 'not_found',
      field: 'collection_keys',
    });
  });
});
