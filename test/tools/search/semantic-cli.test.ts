/**
 * `zot semantic-search` as a person and an agent meet it (issue 16, point 16), on the sample
 * zotero.sqlite with embeddings off: the JSON's `mode` says what ran and agrees with the text;
 * a query of stop words only, or with no letter or digit, is a validation_error (exit 3) that
 * builds no index; the table view is a readable list within 80 columns; and a search that
 * builds the index first says so before the build's bars.
 */
import { existsSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { indexFile } from '../../../src/core/search-index/store.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../../support/embeddings-server.js';
import { screen, zotAt } from '../../surfaces/cli/terminal-harness.js';
import { I, SAMPLE_USER, startSample, texts, type Sample } from '../items/read/setup.js';

let sample: Sample;
beforeEach(async () => {
  sample = await startSample();
});
afterEach(async () => {
  await sample.close();
});

const indexPath = () => indexFile(sample.env().ZOTEUS_DATA_DIR as string, SAMPLE_USER);

/** `zot ARGS` in-process: stdout and stderr piped unless said otherwise. */
const zot = (
  args: string[],
  options: { stdoutTTY?: boolean; stderrTTY?: boolean; env?: Record<string, string> } = {},
) =>
  zotAt(args, {
    env: sample.env(options.env),
    stdoutTTY: options.stdoutTTY ?? false,
    stderrTTY: options.stderrTTY ?? false,
    columns: 80,
  });

const ANNOUNCEMENT = `Building the search index of ${SAMPLE_USER} before searching (once); later searches will be faster.`;

describe('what ran, said the same way in the JSON and the text', () => {
  it('embeddings off: "mode":"keyword" (hybrid was the default asked), and the summary says keywords only', async () => {
    const json = await zot(['semantic-search', 'ice sheet collapse']);
    expect(json.code).toBe(0);
    const data = json.json().data as {
      mode: string;
      hits: Array<{ key: string; score: number; creatorSummary: string; year: string | null }>;
      libraries: Array<{ vectors: unknown }>;
    };
    expect(data.mode).toBe('keyword');
    expect(data.libraries[0]!.vectors).toEqual({ used: false, reason: 'ZOTEUS_EMBEDDINGS is off.' });
    expect(data.hits[0]).toMatchObject({
      key: I.greenlandArticle,
      creatorSummary: 'The IMBIE Team et al.',
      year: '2020',
    });
    // BM25 scores, not rank-fusion values (1/61 = 0.0163934).
    expect(data.hits.every((h) => h.score > 1)).toBe(true);

    const table = await zot(['semantic-search', 'ice sheet collapse'], { stdoutTTY: true });
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(
      /^3 hits for "ice sheet collapse" in users\/8675309 \(keywords only:/,
    );
    expect(table.stdout).toContain('ZOTEUS_EMBEDDINGS is off; BM25 scores).');
  });

  it('mode "keyword" asked: the summary says keywords, not "keywords only"', async () => {
    const table = await zot(['semantic-search', 'Greenland', '--mode', 'keyword'], { stdoutTTY: true });
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toBe(
      `1 hit for "Greenland" in ${SAMPLE_USER} (keywords; BM25 scores).`,
    );
  });
});

describe('the table view: a list for people, within 80 columns', () => {
  it('title, creators · year · type · key · score, and the passage that matched, wrapped', async () => {
    const r = await zot(['semantic-search', 'ice sheet collapse'], { stdoutTTY: true });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        '3 hits for "ice sheet collapse" in users/8675309 (keywords only:',
        'ZOTEUS_EMBEDDINGS is off; BM25 scores).',
        '',
        ' 1. Mass balance of the Greenland Ice Sheet from 1992 to 2018',
        '    The IMBIE Team et al. · 2020 · journalArticle · GREENLD2 · score 9.30',
        '    title: Mass balance of the Greenland «Ice» «Sheet» from 1992 to 2018',
        '',
        ' 2. Antarctic ice-sheet contribution to future sea-level rise',
        '    DeConto and Pollard · 2016 · journalArticle · YK4M9RVR · score 9.30',
        '    title: Antarctic «ice»-«sheet» contribution to future sea-level rise',
        '',
        ' 3. Sea-level rise from the late 19th to the early 21st century',
        '    Church and White · 2011 · journalArticle · CHURCH22 · score 5.73',
        '    abstract: We estimate global mean sea-level rise from tide gauges and',
        '    satellite altimetry, and find an acceleration since the 1990s driven by',
        '    «ice»-«sheet»…',
        '',
      ].join('\n'),
    );
    for (const line of r.stdout.split('\n')) expect([...line].length).toBeLessThanOrEqual(80);
    // No column of the generic table: no library on every row, no ranks, no "matched.itemKey".
    expect(r.stdout).not.toMatch(/matched|ranks|vector/);
  });

  it('a match in a child names the child; the snippet keeps the closing bracket of the text', async () => {
    const child = await zot(['semantic-search', 'accepted version'], { stdoutTTY: true });
    expect(child.stdout.split('\n').slice(3)).toEqual([
      ' 1. Mass balance of the Greenland Ice Sheet from 1992 to 2018',
      '    The IMBIE Team et al. · 2020 · journalArticle · GREENLD2 · score 13.90',
      expect.stringMatching(/^ {4}title \(child [23456789A-Z]{8}\): «Accepted» «Version»$/),
      '',
    ]);
    const group = await zot(
      ['semantic-search', 'accretion', '--library-id', '4711', '--library-type', 'group'],
      {
        stdoutTTY: true,
      },
    );
    expect(group.stdout).toContain('    title: Sea level and coral reef «accretion» (group copy)\n');
  });
});

describe('queries that cannot be ranked are refused, and nothing is built', () => {
  const refused = async (q: string, message: string, hint: string) => {
    const r = await zot(['semantic-search', q]);
    expect(r.code).toBe(3);
    expect(r.json()).toMatchObject({
      ok: false,
      error: { code: 'validation_error', field: 'q', message, hint, retryable: false },
    });
    expect(r.stderr).toBe('');
    // In the table view: Error and Hint on stderr, nothing on stdout.
    const table = await zot(['semantic-search', q], { stdoutTTY: true });
    expect(table.code).toBe(3);
    expect(table.stdout).toBe('');
    // (wrapped to the terminal under their labels)
    expect(table.stderr.replace(/\n +/g, ' ')).toBe(`Error: ${message}\nHint: ${hint}\n`);
  };

  it('stop words only: "too common", with a hint', async () => {
    await refused(
      'the of and',
      'The query "the of and" has only words too common to rank by (the, of, and).',
      'Add a word that names what you look for (a topic, an author, a title word).',
    );
    await refused(
      'To be or not to be',
      'The query "To be or not to be" has only words too common to rank by (to, be, or, not).',
      'Add a word that names what you look for (a topic, an author, a title word).',
    );
    expect(existsSync(indexPath())).toBe(false);
  });

  it('punctuation or an emoji only: no words to search for', async () => {
    const hint = 'Give a word or two that name what you look for (a topic, an author, a title word).';
    await refused('!!!', 'The query "!!!" has no words to search for: it holds no letters or digits.', hint);
    await refused('🙂', 'The query "🙂" has no words to search for: it holds no letters or digits.', hint);
    await refused(
      '— … ?',
      'The query "— … ?" has no words to search for: it holds no letters or digits.',
      hint,
    );
    expect(existsSync(indexPath())).toBe(false);
  });

  it('on MCP too: an isError validation_error, before the index is built', async () => {
    const mcp = await sample.mcp();
    try {
      const r = await mcp.call('zotero_semantic_search', { q: '🙂' });
      expect(r.isError).toBe(true);
      expect(texts(r)[0]).toMatch(/^validation_error: The query "🙂" has no words to search for/);
      const common = await mcp.call('zotero_semantic_search', { q: 'the of and' });
      expect(common.isError).toBe(true);
      expect(texts(common)[0]).toMatch(/^validation_error: The query "the of and" has only words too common/);
    } finally {
      await mcp.close();
    }
    expect(existsSync(indexPath())).toBe(false);
  });

  describe('with embeddings configured', () => {
    let emb: EmbeddingsServer;
    beforeEach(async () => {
      emb = await startEmbeddingsServer({ dimension: 32 });
    });
    afterEach(async () => {
      await emb.close();
    });

    it('the hint offers ranking by meaning; --mode vector ranks stop words by their vector', async () => {
      const env = { ZOTEUS_EMBEDDINGS: 'openai', ZOTEUS_EMBEDDINGS_URL: emb.openaiUrl };
      const r = await zot(['semantic-search', 'to be or not to be'], { env });
      expect(r.code).toBe(3);
      expect(r.json()).toMatchObject({
        error: {
          code: 'validation_error',
          hint: 'Add a word that names what you look for (a topic, an author, a title word), or rank by meaning alone with --mode vector.',
        },
      });
      expect(emb.log).toHaveLength(0);
      const vector = await zot(['semantic-search', 'to be or not to be', '--mode', 'vector'], { env });
      expect(vector.code).toBe(0);
      const data = vector.json().data as { mode: string; hits: unknown[] };
      expect(data.mode).toBe('vector');
      expect(data.hits.length).toBeGreaterThan(0);
      // Punctuation alone is refused whatever the mode.
      const none = await zot(['semantic-search', '?!', '--mode', 'vector'], { env });
      expect(none.code).toBe(3);
    });
  });
});

describe('a search that builds the index first says so', () => {
  it('at a terminal: the announcement stays on the screen, the build’s bars are erased', async () => {
    const r = await zot(['semantic-search', 'Greenland'], { stdoutTTY: true, stderrTTY: true });
    expect(r.code).toBe(0);
    expect(r.stderr.startsWith(`${ANNOUNCEMENT}\n`)).toBe(true);
    expect(r.stderr).toContain('/41 scan');
    expect(screen(r.stderr)).toEqual([ANNOUNCEMENT]);
    // The next search uses the index: nothing on stderr.
    const again = await zot(['semantic-search', 'Greenland'], { stdoutTTY: true, stderrTTY: true });
    expect(again.stderr).toBe('');
  });

  it('in a pipe: the announcement is the first NDJSON event, then the build’s phases', async () => {
    const r = await zot(['semantic-search', 'Greenland']);
    expect(r.code).toBe(0);
    const events = r.stderr
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events[0]).toEqual({
      event: 'start',
      phase: 'index_build',
      // Built in this call, before the search: not a background build.
      message: ANNOUNCEMENT,
      request_id: expect.stringMatching(/^[0-9a-f]{12}$/),
      elapsed_ms: expect.any(Number),
    });
    expect(events.slice(1).map((e) => [e.event, e.phase])).toEqual([
      ['start', 'scan'],
      ['complete', 'scan'],
      ['start', 'items'],
      ['complete', 'items'],
    ]);
  });
});
