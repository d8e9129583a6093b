/**
 * `zot attach KEY --oa` / `zotero_attach_file` with `oa: true` against loopback fakes of
 * Unpaywall, OpenAlex and a PDF host (test/support/oa-services.ts) and the Zotero test server's
 * upload protocol: a valid PDF found, checked and uploaded; an HTML page sent as a PDF and a PDF
 * of another paper refused with their reasons; Unpaywall down → OpenAlex; the download cap; no
 * e-mail, no DOI, the dry-run plan; request counts everywhere. The CLI runs in process.
 */
import { createHash } from 'node:crypto';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mentions } from '../../../src/core/attachments/open-access.js';
import { runCli } from '../../../src/surfaces/cli/main.js';
import { groups, tools } from '../../../src/tools/index.js';
import { makePdf } from '../../support/documents/index.js';
import { startOaFakes, type OaFakes } from '../../support/oa-services.js';
import { LIB, mcpOf, startItemsWorld, type ItemsWorld } from '../items/setup.js';

const DOI = '10.5555/coast.2024.17';
const TITLE = 'Climate Adaptation in Coastal Cities: A Review';

let w: ItemsWorld;
let oa: OaFakes;
let parent: string;
beforeEach(async () => {
  w = await startItemsWorld();
  oa = await startOaFakes();
  [parent] = w.world.server.library(LIB).addItems([{ title: TITLE, DOI }]) as [string];
});
afterEach(async () => {
  await oa.close();
  await w.close();
});

async function zot(argv: string[], env: Record<string, string> = oa.env()) {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void) =>
    Object.assign(
      new Writable({
        write(chunk, _encoding, done) {
          append(String(chunk));
          done();
        },
      }),
      { isTTY: false, columns: 100 },
    );
  const stdin = Object.assign(new PassThrough(), { isTTY: false });
  stdin.end('');
  const code = await runCli({
    argv,
    env: w.env(env),
    io: { stdout: sink((s) => (stdout += s)), stderr: sink((s) => (stderr += s)), stdin },
    tools,
    groups,
  });
  const envelope = JSON.parse(stdout) as {
    ok: boolean | 'partial';
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read the envelope loosely
    data: Record<string, any>;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
    error: { code: string; message: string; field?: string; hint?: string; failed?: any[] };
  };
  return { code, env: envelope, stdout, stderr };
}

/** The paper itself: its title hyphenated across two lines, in other case, and its DOI. */
const PAPER = makePdf({
  pages: [
    ['CLIMATE ADAPTATION IN COASTAL CI-', 'TIES: A REVIEW', 'A. Author and B. Author', `doi:${DOI}`],
    ['2 Methods', 'We reviewed 120 studies.'],
  ],
});
const OTHER_PAPER = makePdf({
  pages: [['Glacier Retreat in the Alps', 'C. Someone', 'doi:10.5555/alps.2023.2']],
});
const HTML = '<!DOCTYPE html><html><head><title>Access denied</title></head><body>Sign in</body></html>';
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

const attachments = () =>
  [...w.world.server.library(LIB).items.values()].filter((i) => i.itemType === 'attachment');
/** Zotero requests other than the key check and the schema. */
const zoteroWork = () =>
  w.world.server.log
    .filter((e) => e.path !== '/keys/current' && e.path !== '/schema')
    .map(
      (e) =>
        `${e.method} ${e.path.replace(/\?.*$/, '').replace(/^\/storage\/upload\/.*/, '/storage/upload/…')}`,
    );

describe('zot attach KEY --oa', () => {
  it('attaches the PDF Unpaywall names (through a redirect), checked and uploaded; OpenAlex is not asked', async () => {
    oa.addFile('paper.pdf', PAPER);
    const url = oa.redirectTo('paper.pdf');
    oa.addUnpaywall(DOI, [{ url_for_pdf: url, version: 'acceptedVersion', host_type: 'repository' }]);
    oa.addOpenAlex(DOI, [{ pdf_url: oa.addFile('unused.pdf', PAPER), is_oa: true }]);

    const r = await zot(['attach', parent, '--oa']);
    expect(r.code).toBe(0);
    expect(r.env.ok).toBe(true);
    const key = r.env.data.succeeded[0].key as string;
    expect(r.env.data).toMatchObject({
      parentItem: parent,
      failed: [],
      succeeded: [
        {
          file: url,
          filename: `Climate Adaptation in Coastal Cities A Review.pdf`,
          title: 'Accepted Version',
          contentType: 'application/pdf',
          size: PAPER.length,
          md5: md5(PAPER),
          upload: 'uploaded',
        },
      ],
      openAccess: { doi: DOI, source: 'unpaywall', url, version: 'acceptedVersion', refused: [], notes: [] },
    });
    expect(attachments()).toHaveLength(1);
    expect(attachments()[0]).toMatchObject({ key, parentItem: parent, md5: md5(PAPER) });
    expect(w.world.server.files.files.get(`${LIB}/${key}`)).toMatchObject({ md5: md5(PAPER) });

    // One Unpaywall lookup with the e-mail; OpenAlex never asked; the redirect and the file.
    expect(oa.requests('unpaywall').map((e) => e.url)).toEqual([
      `/v2/10.5555/coast.2024.17?email=${encodeURIComponent(oa.email)}`,
    ]);
    expect(oa.requests('openalex')).toHaveLength(0);
    const files = oa.requests('files');
    expect(files.map((e) => `${e.url} ${e.status}`)).toEqual(['/go/paper.pdf 302', '/files/paper.pdf 200']);
    for (const e of files) {
      expect(
        Object.keys(e.headers).filter(
          (h) => h.startsWith('zotero-') || h === 'authorization' || h === 'cookie',
        ),
      ).toEqual([]);
    }
    // Zotero: the parent read for its DOI, then the upload path of attach --file (the create
    // reads its client key first, then item, authorization, storage, registration, md5 read back).
    expect(zoteroWork()).toEqual([
      `GET /${LIB}/items`,
      `GET /${LIB}/items`,
      `POST /${LIB}/items`,
      `POST /${LIB}/items/${key}/file`,
      'POST /storage/upload/…',
      `POST /${LIB}/items/${key}/file`,
      `GET /${LIB}/items`,
    ]);
    expect(
      w.world.server.log.find((e) => e.method === 'GET' && e.path.endsWith('/items'))?.query,
    ).toMatchObject({
      itemKey: parent,
    });
  });

  it('a PDF that passes but does not fit the quota: the upload guarantees hold (item trashed), the URL named', async () => {
    w.world.server.files.setQuota(LIB, 0.001);
    const url = oa.addFile('paper.pdf', PAPER);
    oa.addUnpaywall(DOI, [{ url_for_pdf: url }]);
    const r = await zot(['attach', parent, '--oa']);
    expect(r.code).not.toBe(0);
    expect(r.env.ok).toBe(false);
    const failed = r.env.error.failed![0];
    expect(failed).toMatchObject({ file: url, code: 413, trashed: true });
    expect(failed.message).toContain(
      `${url} (${PAPER.length} bytes) does not fit in the library's file storage`,
    );
    expect(failed.message).not.toContain('zoteus-oa-');
    expect(attachments()).toHaveLength(1);
    expect(attachments()[0]!.deleted).toBe(true);
  });

  it('refuses an HTML page sent as application/pdf, then attaches the next candidate', async () => {
    const fake = oa.addFile('fake.pdf', HTML, 'application/pdf');
    const real = oa.addFile('real.pdf', PAPER);
    oa.addUnpaywall(DOI, [
      { url_for_pdf: fake, version: 'publishedVersion' },
      { url_for_pdf: real, version: 'publishedVersion' },
    ]);
    const r = await zot(['attach', parent, '--oa', '--title', 'OA copy']);
    expect(r.code).toBe(0);
    expect(r.env.data.succeeded).toMatchObject([{ file: real, title: 'OA copy', md5: md5(PAPER) }]);
    expect(r.env.data.openAccess).toMatchObject({
      source: 'unpaywall',
      url: real,
      refused: [
        {
          source: 'unpaywall',
          url: fake,
          reason:
            'not a PDF: sent as application/pdf, it starts "<!DOCTYPE html><html><head><title>Access", not %PDF-',
        },
      ],
    });
    expect(attachments()).toHaveLength(1);
    expect(oa.requests('files').map((e) => e.url)).toEqual(['/files/fake.pdf', '/files/real.pdf']);
  });

  it('refuses a PDF of another paper and an HTML page: not_found listing each, nothing created', async () => {
    const other = oa.addFile('other.pdf', OTHER_PAPER);
    const html = oa.addFile('landing', HTML, 'text/html');
    oa.addUnpaywall(DOI, [{ url_for_pdf: other }, { url_for_pdf: html }]);
    const r = await zot(['attach', parent, '--oa'], oa.env({ openalex: false }));
    expect(r.code).toBe(4);
    expect(r.env.error.code).toBe('not_found');
    const otherReason = `a PDF of something else: its first page mentions neither the title "${TITLE}" nor the DOI ${DOI}`;
    const htmlReason =
      'not a PDF: sent as text/html, it starts "<!DOCTYPE html><html><head><title>Access", not %PDF-';
    expect(r.env.error.message).toBe(
      `No open-access PDF of DOI ${DOI} passed the checks, so nothing was attached. 2 candidates refused: ` +
        `1. ${other} (unpaywall): ${otherReason}; 2. ${html} (unpaywall): ${htmlReason}. ` +
        'OpenAlex was not asked: ZOTEUS_OPENALEX_API_KEY is not set.',
    );
    expect(r.env.error.failed).toEqual([
      { source: 'unpaywall', url: other, reason: otherReason },
      { source: 'unpaywall', url: html, reason: htmlReason },
    ]);
    expect(attachments()).toHaveLength(0);
    expect(zoteroWork()).toEqual([`GET /${LIB}/items`]);
    expect(oa.requests('openalex')).toHaveLength(0);
  });

  it('Unpaywall down: OpenAlex is asked with its key, its PDF attached, the key in no output', async () => {
    oa.fail('unpaywall', 500);
    oa.addOpenAlex(DOI, [
      { pdf_url: null, landing_page_url: 'https://example.org/landing', is_oa: true },
      { pdf_url: oa.addFile('oa.pdf', PAPER), version: 'submittedVersion', is_oa: true },
    ]);
    const r = await zot(['attach', parent, '--oa']);
    expect(r.code).toBe(0);
    expect(r.env.data.succeeded).toMatchObject([{ title: 'Submitted Version', md5: md5(PAPER) }]);
    expect(r.env.data.openAccess).toMatchObject({
      source: 'openalex',
      url: `${oa.urls.files}/files/oa.pdf`,
      version: 'submittedVersion',
      refused: [],
      notes: ['Unpaywall could not be asked: Unpaywall answered HTTP 500.'],
    });
    expect(oa.requests('unpaywall')).toHaveLength(1);
    expect(oa.requests('openalex').map((e) => e.url)).toEqual([
      `/works/doi:10.5555/coast.2024.17?api_key=${oa.apiKey}`,
    ]);
    expect(r.stdout + r.stderr).not.toContain(oa.apiKey);
  });

  it('every source down: a retryable error saying no source could be asked, nothing created', async () => {
    oa.fail('unpaywall', 500);
    oa.fail('openalex', 500);
    const r = await zot(['attach', parent, '--oa']);
    expect(r.code).toBe(1);
    expect(r.env.error).toMatchObject({
      code: 'api_error',
      retryable: true,
      message:
        `No open-access source could be asked about DOI ${DOI}: nothing was attached. ` +
        'Unpaywall could not be asked: Unpaywall answered HTTP 500. OpenAlex could not be asked: OpenAlex answered HTTP 500.',
    });
    expect(attachments()).toHaveLength(0);
  });

  it('no e-mail: Unpaywall is skipped with a note when OpenAlex can be asked', async () => {
    oa.addUnpaywall(DOI, [{ url_for_pdf: oa.addFile('never.pdf', PAPER) }]);
    oa.addOpenAlex(DOI, [{ pdf_url: oa.addFile('oa.pdf', PAPER), is_oa: true }]);
    const r = await zot(['attach', parent, '--oa'], oa.env({ email: false }));
    expect(r.code).toBe(0);
    expect(r.env.data.openAccess).toMatchObject({
      source: 'openalex',
      notes: ['Unpaywall was not asked: ZOTEUS_UNPAYWALL_EMAIL is not set.'],
    });
    expect(oa.requests('unpaywall')).toHaveLength(0);
  });

  it('neither an e-mail nor an OpenAlex key: validation_error naming the variable, before any request', async () => {
    const r = await zot(['attach', parent, '--oa'], oa.env({ email: false, openalex: false }));
    expect(r.code).toBe(3);
    expect(r.env.error).toMatchObject({
      code: 'validation_error',
      field: 'ZOTEUS_UNPAYWALL_EMAIL',
      message:
        '--oa finds PDFs through Unpaywall, which asks for an e-mail address: ZOTEUS_UNPAYWALL_EMAIL is not set (nor ZOTEUS_OPENALEX_API_KEY, for OpenAlex).',
    });
    expect(w.world.server.log).toHaveLength(0);
    expect(oa.log).toHaveLength(0);
  });

  it('an item without a DOI: validation_error saying so, no outside request', async () => {
    const [bare] = w.world.server.library(LIB).addItems([{ title: 'No identifier' }]) as [string];
    const r = await zot(['attach', bare, '--oa']);
    expect(r.code).toBe(3);
    expect(r.env.error.code).toBe('validation_error');
    expect(r.env.error.message).toBe(
      `Item ${bare} has no DOI (neither in its DOI field nor as a "DOI:" line in Extra), and open-access PDFs are found by DOI: nothing was attached.`,
    );
    expect(oa.log).toHaveLength(0);
    expect(attachments()).toHaveLength(0);
  });

  it('a DOI in Extra is used; a PDF over ZOTEUS_OA_MAX_MB is refused without being kept', async () => {
    const [item] = w.world.server
      .library(LIB)
      .addItems([{ itemType: 'report', title: TITLE, extra: `DOI: ${DOI}` }]) as [string];
    const big = Buffer.concat([PAPER, Buffer.alloc(2 * 1024 * 1024, 0x20)]);
    const url = oa.addFile('big.pdf', big);
    oa.addUnpaywall(DOI, [{ url_for_pdf: url }]);
    const r = await zot(['attach', item, '--oa'], { ...oa.env({ openalex: false }), ZOTEUS_OA_MAX_MB: '1' });
    expect(r.code).toBe(4);
    expect(r.env.error.failed).toEqual([
      { source: 'unpaywall', url, reason: 'larger than the 1 MB download cap (ZOTEUS_OA_MAX_MB)' },
    ]);
    expect(attachments()).toHaveLength(0);
  });

  it('--oa with --file is refused offline', async () => {
    const r = await zot(['attach', parent, '--oa', '--file', '/tmp/x.pdf']);
    expect(r.code).toBe(3);
    expect(r.env.error).toMatchObject({
      code: 'validation_error',
      field: 'path',
      message: 'Give either --oa (an open-access PDF found by DOI) or --file, not both.',
    });
    expect(w.world.server.log).toHaveLength(0);
  });

  it('--dry-run says what would be asked and checked, with no request anywhere', async () => {
    const r = await zot(['attach', parent, '--oa', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.env.data.would).toMatchObject({
      parent_item: parent,
      doi: `read from item ${parent} (its DOI field, or a DOI: line in Extra)`,
      sources: [
        { source: 'unpaywall', request: `GET ${oa.urls.unpaywall}/v2/{DOI}?email=${oa.email}` },
        {
          source: 'openalex',
          request: `GET ${oa.urls.openalex}/works/doi:{DOI}`,
          key: 'ZOTEUS_OPENALEX_API_KEY, sent as api_key',
          when: 'no Unpaywall candidate passes',
        },
      ],
      download: {
        maxBytes: 100 * 1024 * 1024,
        checks: [
          'starts with %PDF-',
          'has at least one page',
          "its first 3 pages mention the item's title or DOI",
        ],
      },
      attach: 'the first candidate that passes, uploaded to Zotero storage',
    });
    expect(w.world.server.log).toHaveLength(0);
    expect(oa.log).toHaveLength(0);
  });
});

describe('zotero_attach_file with oa over MCP', () => {
  it('oa: true attaches the open-access PDF and reports its source', async () => {
    oa.addUnpaywall(DOI, [{ url_for_pdf: oa.addFile('paper.pdf', PAPER) }]);
    const mcp = await mcpOf(w, oa.env());
    try {
      const made = await mcp.call('zotero_attach_file', { parent_item: parent, oa: true });
      expect(made.isError).toBeFalsy();
      expect(made.structuredContent).toMatchObject({
        succeeded: [{ title: 'Full Text PDF', md5: md5(PAPER) }],
        openAccess: { source: 'unpaywall', url: `${oa.urls.files}/files/paper.pdf` },
      });
      const both = await mcp.call('zotero_attach_file', {
        parent_item: parent,
        oa: true,
        content_base64: 'eA==',
        filename: 'x.txt',
      });
      expect(both.isError).toBe(true);
      expect(JSON.stringify(both.content)).toContain(
        'Give either oa: true (an open-access PDF found by DOI) or content_base64, not both.',
      );
    } finally {
      await mcp.close();
    }
    expect(attachments()).toHaveLength(1);
  });
});

describe('the title check', () => {
  it('ignores case, spacing, hyphenation and punctuation; a different title does not match', () => {
    const item = { doi: '10.1/x', title: 'Deep Learning for Sea-Level Rise' };
    expect(mentions('DEEP LEARN-\nING FOR SEA LEVEL RISE', item)).toBe(true);
    expect(mentions('Shallow learning for sea-level rise', item)).toBe(false);
    expect(mentions('see https://doi.org/10.1/X', item)).toBe(true);
  });
});
