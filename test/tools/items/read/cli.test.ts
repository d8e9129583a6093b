/**
 * CLI contract of the read commands, run as a subprocess (needs `npm run build`) on the sample
 * zotero.sqlite with no API key: `zot search`, `zot list [--stream]`, `zot recent --days N`,
 * `zot read KEY` (and its exit codes), `zot tag list`, `zot stats`, `zot summarize KEY…` and
 * `zot summarize-all` with progress events on stderr.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { C, envelope, I, SAMPLE_USER, startSample, stderrEvents, type Sample } from './setup.js';

let sample: Sample;
beforeAll(async () => {
  sample = await startSample();
});
afterAll(async () => {
  await sample.close();
});

const zot = (args: string[], extra: Record<string, string | undefined> = {}) => sample.zot(args, extra);
type Item = { key: string; data: Record<string, unknown> };
const items = (data: Record<string, unknown>) => data.items as Item[];
const META = {
  schema_version: expect.any(String),
  cli_version: expect.any(String),
  request_id: expect.stringMatching(/^[0-9a-f]{12}$/),
  latency_ms: expect.any(Number),
};

describe('zot search', () => {
  it('the seed’s `zot search "attention" --limit 5`: one envelope, items in the Web API shape, no key needed', async () => {
    const r = await zot(['search', 'attention', '--limit', '5']);
    expect(r.code).toBe(0);
    const env = envelope(r);
    expect(Object.keys(env)).toEqual(['ok', 'data', 'meta']);
    expect(env.meta).toEqual(META);
    expect(env.data).toMatchObject({
      start: 0,
      backend: 'sqlite',
      library: SAMPLE_USER,
      provenance: expect.any(String),
    });
    const found = items(env.data);
    expect(found.length).toBeGreaterThan(0);
    expect(found.length).toBeLessThanOrEqual(5);
    expect(found.map((i) => i.key)).toContain(I.attentionPaper);
    expect(found[0]).toMatchObject({
      key: expect.any(String),
      version: expect.any(Number),
      data: { itemType: expect.any(String) },
    });
    expect(r.stderr).toBe('');
  });

  it('words match across punctuation and accents: "sea level" finds Sea-level, "muller" finds Müller', async () => {
    const sea = envelope(await zot(['search', 'sea level', '--limit', '100']));
    expect(items(sea.data).map((i) => i.data.title)).toContain(
      'Sea-level rise from the late 19th to the early 21st century',
    );
    const muller = envelope(await zot(['search', 'muller']));
    expect(items(muller.data).map((i) => i.key)).toContain(I.muellerThesis);
  });

  it('--collection, --tag, --type, --sort, --start, --limit, --qmode', async () => {
    const r = envelope(
      await zot([
        'search',
        'sea',
        '--collection',
        C.seaLevel,
        '--tag',
        'sea level',
        '--type',
        'journalArticle',
      ]),
    );
    expect(items(r.data).length).toBeGreaterThan(0);
    for (const i of items(r.data)) {
      expect(i.data.itemType).toBe('journalArticle');
      expect(i.data.collections).toContain(C.seaLevel);
    }
    const sorted = envelope(
      await zot(['search', 'sea', '--sort', 'title', '--direction', 'asc', '--start', '1', '--limit', '2']),
    );
    expect(sorted.data.start).toBe(1);
    expect(items(sorted.data)).toHaveLength(2);
    const all = envelope(await zot(['search', 'thermosteric', '--qmode', 'everything']));
    expect(items(all.data).map((i) => i.key)).toEqual([I.seaLevelArticle]);
  });

  it('bad input is validation_error (exit 3); --dry-run is refused on a read', async () => {
    const r = await zot(['search', 'x', '--limit', '101']);
    expect(r.code).toBe(3);
    expect(envelope(r).error).toMatchObject({ code: 'validation_error', field: 'limit' });
    expect((await zot(['search', 'x', '--sort', 'nope'])).code).toBe(3);
    expect((await zot(['search', 'x', '--dry-run'])).code).toBe(3);
  });

  it('without the desktop database and without a key: auth_missing (exit 2)', async () => {
    const r = await zot(['search', 'x'], { ZOTERO_DATA_DIR: `${sample.dir}/nowhere` });
    expect(r.code).toBe(2);
    expect(envelope(r).error.code).toBe('auth_missing');
  });
});

describe('zot search returns works, not their parts', () => {
  it('no query: top-level items only (no child notes, attachments, annotations); --include-children lists them', async () => {
    const works = items(envelope(await zot(['search', '--limit', '100'])).data);
    expect(works.length).toBeGreaterThan(0);
    expect(works.filter((i) => i.data.parentItem !== undefined)).toEqual([]);
    const all = items(envelope(await zot(['search', '--include-children', '--limit', '100'])).data);
    expect(all.map((i) => i.data.itemType)).toEqual(
      expect.arrayContaining(['note', 'attachment', 'annotation']),
    );
  });

  it('"pdf" matches child attachment titles: their parents are listed, not the attachments', async () => {
    const found = items(envelope(await zot(['search', 'pdf'])).data);
    expect(found.map((i) => i.key).sort()).toEqual(
      [I.attentionPaper, I.muellerThesis, I.seaLevelArticle, I.linkedFile].sort(),
    );
    const children = items(envelope(await zot(['search', 'pdf', '--include-children'])).data);
    expect(children.every((i) => i.data.itemType === 'attachment')).toBe(true);
  });
});

describe('zot list and zot recent', () => {
  it('`zot list --stream`: one NDJSON line per item, then the summary line', async () => {
    const r = await zot(['list', '--stream', '--limit', '3']);
    expect(r.code).toBe(0);
    const lines = r.lines();
    expect(lines).toHaveLength(4);
    for (const line of lines.slice(0, 3)) {
      expect(line).toEqual({
        ok: true,
        data: expect.objectContaining({ key: expect.any(String), data: expect.any(Object) }),
      });
      expect((line.data as Item).data.parentItem).toBeUndefined();
    }
    const total = envelope(await zot(['list', '--limit', '1'])).data.totalResults as number;
    expect(lines[3]).toEqual({ ok: true, summary: { count: 3, total, has_more: true }, meta: META });
    // Most recently modified first.
    const modified = lines.slice(0, 3).map((l) => (l.data as Item).data.dateModified as string);
    expect(modified).toEqual([...modified].sort().reverse());
  });

  it('`zot list` takes no query; table mode prints one line per item', async () => {
    expect((await zot(['list', 'oops'])).code).toBe(3);
    const table = await zot(['list', '--limit', '3'], { ZOT_FORMAT: 'table' });
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    // The rows, then the page line and the command for the next page.
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/^[23456789A-Z]{8} {2}\S+/);
    expect(lines[3]).toMatch(/^Showing 1–3 of \d+ items \(sqlite\)\.$/);
    expect(lines[4]).toBe('Next page: zot list --limit 3 --start 3');
  });

  it('`zot recent`: newest added first; --days N keeps those added in the last N days', async () => {
    const recent = envelope(await zot(['recent', '--limit', '100']));
    const added = items(recent.data).map((i) => i.data.dateAdded as string);
    expect(added).toEqual([...added].sort().reverse());
    const newest = Date.parse(added[0]!);
    const days = Math.ceil((Date.now() - newest) / 86_400_000) + 1;
    const window = envelope(await zot(['recent', '--days', String(days)]));
    expect(window.data.totalResults).toBeGreaterThanOrEqual(1);
    expect(
      items(window.data).every(
        (i) => Date.parse(i.data.dateAdded as string) >= Date.now() - days * 86_400_000,
      ),
    ).toBe(true);
    const none = envelope(await zot(['recent', '--days', '1']));
    expect(none.data.totalResults).toBe(0);
    expect((await zot(['recent', '--sort', 'title'])).code).toBe(3);
  });
});

describe('zot read', () => {
  it('prints the item, its children and collection names', async () => {
    const r = await zot(['read', I.seaLevelArticle]);
    expect(r.code).toBe(0);
    const data = envelope(r).data;
    expect(data).toMatchObject({
      item: { key: I.seaLevelArticle, data: { DOI: '10.1007/s10712-011-9119-1' } },
      collections: [{ key: C.seaLevel, name: 'Sea Level' }],
      fulltext: true,
      inTrash: false,
      backend: 'sqlite',
    });
    expect((data.children as Array<{ itemType: string }>).map((c) => c.itemType).sort()).toEqual([
      'attachment',
      'attachment',
      'note',
    ]);
    const table = await zot(['read', I.seaLevelArticle], { ZOT_FORMAT: 'table' });
    expect(table.stdout.split('\n')[0]).toBe(
      'Church, J. A., & White, N. J. (2011). Sea-level rise from the late 19th to the early 21st century. Surveys in Geophysics, 32(4-5), 585-602. https://doi.org/10.1007/s10712-011-9119-1',
    );
    expect(table.stdout).toContain('Reading notes');
  });

  it('`zot read NOPE` exits 4 (not_found) like a well-formed unknown key; a missing key exits 3', async () => {
    // agent-interface.md: `zot read NOPE; echo $?` is 4. A lookup of what names nothing is not_found.
    const nope = await zot(['read', 'NOPE']);
    expect(nope.code).toBe(4);
    expect(envelope(nope).error).toMatchObject({ code: 'not_found', field: 'item_key' });
    for (const command of ['summarize', 'pdf']) {
      const other = await zot([command, 'NOPE']);
      expect(other.code).toBe(4);
      expect(envelope(other).error).toMatchObject({ code: 'not_found' });
    }
    const unknown = await zot(['read', 'ABCD2345']);
    expect(unknown.code).toBe(4);
    expect(envelope(unknown).error).toMatchObject({
      code: 'not_found',
      message: `No item "ABCD2345" in ${SAMPLE_USER}.`,
    });
    expect((await zot(['read'])).code).toBe(3);
  });
});

describe('zot tag list, zot stats', () => {
  it('`zot tag list` pages the tags with counts; --q filters', async () => {
    const r = envelope(await zot(['tag', 'list', '--q', 'sea']));
    expect(r.data).toMatchObject({
      tags: [{ tag: 'sea level', type: 0, numItems: expect.any(Number) }],
      totalResults: 1,
    });
    const lines = (await zot(['tag', 'list', '--stream', '--limit', '2'])).lines();
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ summary: { count: 2, has_more: true } });
  });

  it('`zot stats` counts the library and names the backend', async () => {
    const r = await zot(['stats']);
    expect(r.code).toBe(0);
    expect(envelope(r).data).toMatchObject({
      backend: 'sqlite',
      library: SAMPLE_USER,
      items: {
        topLevel: expect.any(Number),
        byType: expect.objectContaining({ journalArticle: expect.any(Number) }),
      },
      trash: expect.any(Number),
      collections: expect.any(Number),
      tags: expect.any(Number),
    });
    const table = await zot(['stats'], { ZOT_FORMAT: 'table' });
    expect(table.stdout.split('\n')[0]).toMatch(/^users\/8675309 \(sqlite\): \d+ top-level items/);
  });
});

describe('zot summarize, zot summarize-all', () => {
  it('`zot summarize KEY…` prints digests; an unknown key exits 4', async () => {
    const r = await zot(['summarize', I.seaLevelArticle, I.standaloneNote]);
    expect(r.code).toBe(0);
    const digests = envelope(r).data.digests as Array<Record<string, unknown>>;
    expect(digests.map((d) => d.key)).toEqual([I.seaLevelArticle, I.standaloneNote]);
    expect(digests[0]).toMatchObject({ year: '2011', fulltext: true, notes: [{ title: 'Reading notes' }] });
    const table = await zot(['summarize', I.seaLevelArticle], { ZOT_FORMAT: 'table' });
    expect(table.stdout).toContain('  Full text: yes');
    expect((await zot(['summarize', 'ABCD2345'])).code).toBe(4);
  });

  it('`zot summarize-all` streams digests with start/complete progress events on stderr', async () => {
    const r = await zot(['summarize-all', '--collection', C.seaLevel, '--stream']);
    expect(r.code).toBe(0);
    const lines = r.lines();
    const summary = lines.at(-1) as { summary: { count: number; total: number; has_more: boolean } };
    expect(summary.summary.has_more).toBe(false);
    expect(lines).toHaveLength(summary.summary.count + 1);
    for (const line of lines.slice(0, -1)) {
      expect((line.data as { collections: Array<{ key: string }> }).collections.map((c) => c.key)).toContain(
        C.seaLevel,
      );
    }
    const events = stderrEvents(r.stderr);
    expect(events[0]).toMatchObject({
      event: 'start',
      phase: 'summarize',
      total: summary.summary.count,
      request_id: expect.any(String),
    });
    expect(events.at(-1)).toMatchObject({
      event: 'complete',
      done: summary.summary.count,
      total: summary.summary.count,
      succeeded: summary.summary.count,
      failed: 0,
    });
  });

  it('--start and --limit page the library in the order items were added', async () => {
    const page = envelope(await zot(['summarize-all', '--start', '2', '--limit', '3']));
    const all = envelope(await zot(['summarize-all']));
    expect((page.data.digests as Array<{ key: string }>).map((d) => d.key)).toEqual(
      (all.data.digests as Array<{ key: string }>).slice(2, 5).map((d) => d.key),
    );
    expect(all.data.digests as unknown[]).toHaveLength(all.data.totalResults as number);
  });
});
