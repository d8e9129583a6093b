/**
 * Full text in the search index (ZOTEUS_INDEX_FULLTEXT): an attachment's text is indexed under
 * it, so a passage only the PDF holds ranks its parent item, with the attachment named as the
 * holder; without the option the same words find nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyTool, ProgressEvent } from '../../../src/core/tool.js';
import indexLibrary from '../../../src/tools/search/zotero-index.js';
import semanticSearch from '../../../src/tools/search/semantic-search.js';
import { I, SAMPLE_USER, startSample, type Sample } from '../items/read/setup.js';

let sample: Sample;
beforeAll(async () => {
  sample = await startSample();
});
afterAll(async () => {
  await sample?.close();
});

async function call(
  tool: object,
  input: Record<string, unknown>,
  env: Record<string, string> = {},
  progress?: ProgressEvent[],
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<any> {
  const t = tool as AnyTool;
  const deps = sample.deps({ env, ...(progress ? { progress } : {}) });
  try {
    return t.output.parse(await t.run(t.input.parse(input), deps));
  } finally {
    await deps.services.close();
  }
}

describe('full text in the index', () => {
  it('is left out by default: a word only the PDF holds finds nothing', async () => {
    const built = await call(indexLibrary, { action: 'build' });
    expect(built).toMatchObject({
      library: SAMPLE_USER,
      backend: 'sqlite',
      report: { mode: 'build', fulltext: null },
    });
    const out = await call(semanticSearch, { q: 'thermosteric', mode: 'keyword' });
    expect(out.hits).toEqual([]);
  });

  it('with ZOTEUS_INDEX_FULLTEXT=true, a passage of the PDF ranks its item, naming the attachment', async () => {
    const events: ProgressEvent[] = [];
    const updated = await call(indexLibrary, { action: 'update' }, { ZOTEUS_INDEX_FULLTEXT: 'true' }, events);
    expect(updated.report.fulltext.indexed).toBeGreaterThanOrEqual(2);
    expect(updated.status.fulltextDocuments).toBe(updated.report.fulltext.indexed);
    expect(events.some((e) => e.phase === 'fulltext' && e.event === 'progress')).toBe(true);

    const out = await call(semanticSearch, { q: 'thermosteric expansion', mode: 'keyword' });
    expect(out.hits[0]).toMatchObject({
      key: I.seaLevelArticle,
      library: SAMPLE_USER,
      matched: { field: 'fulltext' },
    });
    expect(out.hits[0].matched.itemKey).not.toBe(I.seaLevelArticle);
    expect(out.hits[0].matched.snippet).toContain('«Thermosteric» «expansion»');

    // Read once per attachment state: a second update reads no document.
    const again = await call(indexLibrary, { action: 'update' }, { ZOTEUS_INDEX_FULLTEXT: 'true' });
    expect(again.report.fulltext).toEqual({ indexed: 0, empty: 0, failed: 0 });
  });
});
