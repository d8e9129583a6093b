/**
 * Open-access PDFs for an item's DOI (`attach --oa`): ask Unpaywall (`GET /v2/{DOI}?email=`,
 * needs ZOTEUS_UNPAYWALL_EMAIL) and, when it yields nothing that passes, OpenAlex
 * (`GET /works/doi:{DOI}?api_key=`, needs ZOTEUS_OPENALEX_API_KEY; skipped with a note without
 * it) for PDF addresses (metadata-services.md); download each candidate to a temporary file,
 * at most ZOTEUS_OA_MAX_MB (default 100 MB), through the outbound HTTP layer (redirects followed
 * by hand; no Zotero credential ever goes there); keep the first that starts with `%PDF-`, has
 * pages (pdfjs), and whose first pages mention the item's title or DOI; then attach it through
 * the upload path (upload.ts), so every guarantee of a file upload holds. Nothing passes →
 * `not_found` listing each candidate and why, and nothing is created.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as PdfJsModule from 'pdfjs-dist/legacy/build/pdf.mjs';
import { paramRef } from '../call/refs.js';
import { isZoteusError, ZoteusError } from '../errors.js';
import { createHttpLayer, newCall, type FetchLike, type HttpAnswer } from '../http/index.js';
import { webClient } from '../library/keys.js';
import { openWebLibrary } from '../library/web.js';
import type { Deps } from '../tool.js';
import { parseDoi } from '../items/identifiers.js';
import { attachFiles, type AttachFileOutput } from './upload.js';
import { CHECKED_PAGES, checkOpenAccessConfig, type OaInput } from './open-access-plan.js';

export { CHECKED_PAGES, checkOpenAccessConfig, planOpenAccess, type OaInput } from './open-access-plan.js';

export type OaSource = 'unpaywall' | 'openalex';

/** Pages whose text must mention the title or the DOI. */
/** A PDF host may take longer than an API: at least this long for one download. */
const DOWNLOAD_TIMEOUT_MS = 120_000;
/** Bytes of a refused answer (an error page) kept for its excerpt. */
const ERROR_BODY_BYTES = 4096;

export interface OaCandidate {
  source: OaSource;
  url: string;
  /** submittedVersion, acceptedVersion or publishedVersion, as the source says. */
  version?: string | undefined;
  license?: string | undefined;
}

export interface RefusedCandidate {
  source: OaSource;
  url: string;
  reason: string;
}

export interface OpenAccessResult {
  doi: string;
  source: OaSource;
  url: string;
  version?: string;
  license?: string;
  /** Candidates tried before it, each with why it was refused. */
  refused: RefusedCandidate[];
  /** What else happened: a source skipped, unreachable, or without a record. */
  notes: string[];
}

export type OaAttachOutput = AttachFileOutput & { openAccess: OpenAccessResult };

/** Finds, checks and attaches an open-access PDF of the item's DOI. */
export async function attachOpenAccess(deps: Deps, input: OaInput): Promise<OaAttachOutput> {
  checkOpenAccessConfig(deps.config);
  const client = await webClient(deps);
  const call = client.newCall();
  // The side that takes the library's writes (write-route.ts), as its upload (upload.ts) does.
  const lib = await openWebLibrary(deps, input, { access: 'write', call });
  const read = await lib.client.getByKeys(lib.prefix, 'items', [input.parent_item], { call });
  const parent = read.byKey.get(input.parent_item);
  if (!parent) {
    throw new ZoteusError(
      'not_found',
      `The parent item ${input.parent_item} does not exist in library ${lib.prefix}: nothing was attached.`,
      { field: 'parent_item' },
    );
  }
  const data = (parent.data ?? {}) as Record<string, unknown>;
  if (data.itemType === 'attachment' || data.itemType === 'note' || data.itemType === 'annotation') {
    throw new ZoteusError(
      'validation_error',
      `${input.parent_item} is ${data.itemType === 'attachment' ? 'an' : 'a'} ${String(data.itemType)}, not a regular item: an open-access PDF goes under the item it is the text of.`,
      { field: 'parent_item' },
    );
  }
  const doi = doiOf(data);
  if (!doi) {
    throw new ZoteusError(
      'validation_error',
      `Item ${input.parent_item} has no DOI (neither in its DOI field nor as a "DOI:" line in Extra), and open-access PDFs are found by DOI: nothing was attached.`,
      {
        field: 'parent_item',
        hint: `Add the DOI to the item, or attach a file you have with ${paramRef('path')}.`,
      },
    );
  }
  const title = typeof data.title === 'string' ? data.title : '';
  const found = await findPdf(deps, doi, title);
  try {
    const out = await attachFiles(
      // The file is this call's own download, not a path of the caller's: a shared deployment
      // may attach it too.
      { ...deps, fileRoot: undefined },
      {
        parent_item: input.parent_item,
        path: [found.path],
        title: input.title ?? titleOf(found.candidate.version),
        library_id: input.library_id,
        library_type: input.library_type,
      },
    );
    const url = found.candidate.url;
    const result: OpenAccessResult = {
      doi,
      source: found.candidate.source,
      url,
      refused: found.refused,
      notes: found.notes,
    };
    if (found.candidate.version) result.version = found.candidate.version;
    if (found.candidate.license) result.license = found.candidate.license;
    return {
      ...out,
      succeeded: out.succeeded.map((f) => ({ ...f, file: url })),
      // The temporary file is this call's own: messages name where the PDF came from instead.
      failed: out.failed.map((f) => ({ ...f, file: url, message: f.message.split(found.path).join(url) })),
      openAccess: result,
    };
  } finally {
    await rm(found.dir, { recursive: true, force: true });
  }
}

/** The item's DOI: its DOI field, else a `DOI:` line in Extra (where Zotero keeps it for types without one). */
function doiOf(data: Record<string, unknown>): string | undefined {
  const field = typeof data.DOI === 'string' ? parseDoi(data.DOI) : undefined;
  if (field) return field;
  const line = /^DOI:\s*(\S+)\s*$/im.exec(typeof data.extra === 'string' ? data.extra : '');
  return line ? parseDoi(line[1] as string) : undefined;
}

/** Zotero's titles of found PDFs, by the version the source reports. */
function titleOf(version: string | undefined): string {
  if (version === 'acceptedVersion') return 'Accepted Version';
  if (version === 'submittedVersion') return 'Submitted Version';
  return 'Full Text PDF';
}

interface Found {
  candidate: OaCandidate;
  dir: string;
  path: string;
  refused: RefusedCandidate[];
  notes: string[];
}

/** What asking one source gave: its candidates, or why there are none. */
interface Asked {
  candidates: OaCandidate[];
  note?: string;
  /** The source could not be asked (no answer, a failure on its side). */
  error?: ZoteusError;
}

async function findPdf(deps: Deps, doi: string, title: string): Promise<Found> {
  const oa = deps.config.openAccess;
  const refused: RefusedCandidate[] = [];
  const notes: string[] = [];
  const errors: ZoteusError[] = [];
  const tried = new Set<string>();
  const dir = await mkdtemp(join(tmpdir(), 'zoteus-oa-'));
  const path = join(dir, fileNameOf(title, doi));
  try {
    const sources: Array<[OaSource, (() => Promise<Asked>) | string]> = [
      [
        'unpaywall',
        oa.unpaywallEmail === undefined
          ? 'Unpaywall was not asked: ZOTEUS_UNPAYWALL_EMAIL is not set.'
          : () => askUnpaywall(deps, doi, oa.unpaywallEmail as string),
      ],
      [
        'openalex',
        deps.config.metadata.openalexKey === undefined
          ? 'OpenAlex was not asked: ZOTEUS_OPENALEX_API_KEY is not set.'
          : () => askOpenAlex(deps, doi, deps.config.metadata.openalexKey as string),
      ],
    ];
    let askedSources = 0;
    for (const [, ask] of sources) {
      if (typeof ask === 'string') {
        notes.push(ask);
        continue;
      }
      askedSources++;
      const asked = await ask();
      if (asked.note) notes.push(asked.note);
      if (asked.error) errors.push(asked.error);
      for (const candidate of asked.candidates) {
        if (tried.has(candidate.url)) continue;
        tried.add(candidate.url);
        const reason = await tryCandidate(deps, candidate, path, { doi, title });
        if (reason === undefined) return { candidate, dir, path, refused, notes };
        refused.push({ source: candidate.source, url: candidate.url, reason });
      }
    }
    throw nothingPassed(doi, refused, notes, errors.length === askedSources ? errors : []);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

function nothingPassed(
  doi: string,
  refused: readonly RefusedCandidate[],
  notes: readonly string[],
  /** The failures of the sources asked, when every one of them failed. */
  failures: readonly ZoteusError[],
): ZoteusError {
  const said = notes.length ? ` ${notes.join(' ')}` : '';
  const first = failures[0];
  if (refused.length === 0 && first !== undefined) {
    // No source could be asked: the answer is unknown, not "none".
    const retryable = failures.every((e) => e.retryable);
    return new ZoteusError(
      first.code,
      `No open-access source could be asked about DOI ${doi}: nothing was attached.${said}`,
      { retryable, ...(retryable ? { hint: 'Retry in a moment.' } : {}) },
    );
  }
  if (refused.length === 0) {
    return new ZoteusError(
      'not_found',
      `No open-access PDF of DOI ${doi} is known: nothing was attached.${said}`,
      { hint: `Attach a copy you have with ${paramRef('path')}.` },
    );
  }
  const list = refused.map((r, i) => `${i + 1}. ${r.url} (${r.source}): ${r.reason}`).join('; ');
  return new ZoteusError(
    'not_found',
    `No open-access PDF of DOI ${doi} passed the checks, so nothing was attached. ${refused.length} candidate${refused.length === 1 ? '' : 's'} refused: ${list}.${said}`,
    { failed: refused.map((r) => ({ ...r })), hint: `Attach a copy you have with ${paramRef('path')}.` },
  );
}

/** A file name from the title (what Zotero shows as the file), else the DOI. */
function fileNameOf(title: string, doi: string): string {
  const base = (title || doi)
    .normalize('NFKC')
    .replace(/[\\/:*?"<>|\p{Cc}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 120)
    .trim();
  return `${base || 'open-access'}.pdf`;
}

function doiPath(doi: string): string {
  return doi.split('/').map(encodeURIComponent).join('/');
}

function obj(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}

/** GET of a JSON API: 404 → undefined; other failures → a ZoteusError (retryable when it may pass). */
async function getJson(
  deps: Deps,
  service: string,
  variable: string,
  url: string,
  label: string,
  secret?: string,
): Promise<Record<string, unknown> | undefined> {
  const layer = createHttpLayer({
    clock: deps.clock,
    redact: deps.redact.with([secret]),
    log: (line) => deps.log.debug(line),
    timeoutMs: deps.config.timeoutMs,
    retry: { statuses: new Set([429, 503]), maxRetries: 1, maxWaitMs: 10_000 },
  });
  return layer.send(
    {
      method: 'GET',
      url,
      label,
      server: service,
      headers: { Accept: 'application/json', 'User-Agent': `Zoteus/${deps.version}` },
      resendable: true,
      call: newCall(deps.config.retryBudgetMs),
      failures: {
        rateLimited: (seconds, cause) =>
          new ZoteusError(
            cause.kind === 'status' && cause.status === 503 ? 'api_error' : 'rate_limited',
            `${service} is busy (HTTP ${cause.kind === 'status' ? cause.status : 429}).`,
            { retryable: true, retryAfterSeconds: seconds },
          ),
        unreachable: (reason) =>
          new ZoteusError(
            'network_error',
            `Could not reach ${service} (${new URL(url).origin}): ${reason}.`,
            {
              hint: `Check the network (and ${variable}), then retry.`,
            },
          ),
      },
    },
    ({ status, text }) => {
      if (status === 404) return undefined;
      if (status < 200 || status >= 300) {
        throw new ZoteusError(
          'api_error',
          `${service} answered HTTP ${status}${status === 401 || status === 403 || status === 422 ? ' (check its settings)' : ''}.`,
          { status, retryable: status >= 500 },
        );
      }
      try {
        return obj(JSON.parse(text)) ?? {};
      } catch {
        throw new ZoteusError('api_error', `${service} answered with something that is not JSON.`, {
          retryable: true,
        });
      }
    },
  );
}

async function askUnpaywall(deps: Deps, doi: string, email: string): Promise<Asked> {
  const base = deps.config.openAccess.unpaywallUrl;
  const url = `${base}/v2/${doiPath(doi)}?email=${encodeURIComponent(email)}`;
  let record: Record<string, unknown> | undefined;
  try {
    record = await getJson(deps, 'Unpaywall', 'ZOTEUS_UNPAYWALL_URL', url, url);
  } catch (error) {
    if (!isZoteusError(error)) throw error;
    return { candidates: [], note: `Unpaywall could not be asked: ${error.message}`, error };
  }
  if (record === undefined) return { candidates: [], note: `Unpaywall has no record of DOI ${doi}.` };
  const locations = [obj(record.best_oa_location), ...arr(record.oa_locations).map(obj)];
  const candidates: OaCandidate[] = [];
  for (const loc of locations) {
    const pdf = str(loc?.url_for_pdf);
    if (pdf && /^https?:\/\//i.test(pdf))
      candidates.push({
        source: 'unpaywall',
        url: pdf,
        version: str(loc?.version),
        license: str(loc?.license),
      });
  }
  if (candidates.length === 0) {
    const closed = record.is_oa === false;
    return {
      candidates,
      note: closed
        ? `Unpaywall knows no open-access copy of DOI ${doi} (${str(record.oa_status) ?? 'closed'}).`
        : `Unpaywall lists no PDF address for DOI ${doi} (only landing pages).`,
    };
  }
  return { candidates };
}

async function askOpenAlex(deps: Deps, doi: string, key: string): Promise<Asked> {
  const base = deps.config.metadata.openalex;
  const bare = `${base}/works/doi:${doiPath(doi)}`;
  let work: Record<string, unknown> | undefined;
  try {
    work = await getJson(
      deps,
      'OpenAlex',
      'ZOTEUS_OPENALEX_URL',
      `${bare}?api_key=${encodeURIComponent(key)}`,
      bare,
      key,
    );
  } catch (error) {
    if (!isZoteusError(error)) throw error;
    return { candidates: [], note: `OpenAlex could not be asked: ${error.message}`, error };
  }
  if (work === undefined) return { candidates: [], note: `OpenAlex has no record of DOI ${doi}.` };
  const locations = [obj(work.best_oa_location), ...arr(work.locations).map(obj)];
  const candidates: OaCandidate[] = [];
  for (const loc of locations) {
    const pdf = str(loc?.pdf_url);
    if (pdf && /^https?:\/\//i.test(pdf) && loc?.is_oa !== false)
      candidates.push({
        source: 'openalex',
        url: pdf,
        version: str(loc?.version),
        license: str(loc?.license),
      });
  }
  if (candidates.length === 0)
    return { candidates, note: `OpenAlex lists no open-access PDF address for DOI ${doi}.` };
  return { candidates };
}

function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A candidate's refusal, as its reason. */
class Refused extends Error {}

/** Downloads and checks one candidate into `path`; undefined when it passes, else why not. */
async function tryCandidate(
  deps: Deps,
  candidate: OaCandidate,
  path: string,
  item: { doi: string; title: string },
): Promise<string | undefined> {
  const cap = deps.config.openAccess.maxBytes;
  try {
    const answer = await download(deps, candidate.url, path, cap);
    if (answer.status < 200 || answer.status >= 300) return `the server answered HTTP ${answer.status}`;
    const handle = await open(path, 'r');
    const head = Buffer.alloc(1024);
    let n: number;
    try {
      ({ bytesRead: n } = await handle.read(head, 0, head.length, 0));
    } finally {
      await handle.close();
    }
    if (!head.subarray(0, n).includes('%PDF-')) {
      const type = answer.headers.get('content-type')?.split(';')[0]?.trim();
      const start = head
        .subarray(0, Math.min(n, 40))
        .toString('latin1')
        .replace(/[^\x20-\x7e]+/g, ' ')
        .trim();
      return `not a PDF: ${type ? `sent as ${type}, ` : ''}it starts ${start ? `"${start}"` : 'empty'}, not %PDF-`;
    }
    const bytes = await readFile(path);
    // pdfjs takes a plain Uint8Array, not a Buffer.
    return await checkPdf(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), item);
  } catch (error) {
    if (error instanceof Refused) return error.message;
    if (isZoteusError(error)) return error.message;
    throw error;
  }
}

/** GET through the HTTP layer, the 2xx body streamed into `path` (at most `cap` bytes). */
function download(deps: Deps, url: string, path: string, cap: number): Promise<HttpAnswer> {
  const capMb = Math.round((cap / 1024 / 1024) * 10) / 10;
  const tooLarge = (): Refused => new Refused(`larger than the ${capMb} MB download cap (ZOTEUS_OA_MAX_MB)`);
  const toFile: FetchLike = async (input, init) => {
    const res = await fetch(input, init);
    if (res.status >= 300 && res.status < 400) return res;
    if (res.status < 200 || res.status >= 300) {
      const text = await readSome(res, ERROR_BODY_BYTES);
      return new Response(text, { status: res.status, headers: res.headers });
    }
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > cap) {
      await res.body?.cancel().catch(() => undefined);
      throw new ZoteusError('validation_error', tooLarge().message);
    }
    // Each attempt (a resend after a reset) starts the file afresh.
    const out = createWriteStream(path);
    let size = 0;
    try {
      if (res.body) {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          size += chunk.byteLength;
          if (size > cap) throw new ZoteusError('validation_error', tooLarge().message);
          if (!out.write(chunk)) await new Promise<void>((done) => out.once('drain', done));
        }
      }
    } finally {
      await new Promise<void>((done, fail) => out.end((e?: Error | null) => (e ? fail(e) : done())));
    }
    return new Response(null, { status: res.status, headers: res.headers });
  };
  const layer = createHttpLayer({
    clock: deps.clock,
    redact: deps.redact,
    log: (line) => deps.log.debug(line),
    timeoutMs: Math.max(deps.config.timeoutMs, DOWNLOAD_TIMEOUT_MS),
    fetch: toFile,
    retry: { statuses: new Set([429, 503]), maxRetries: 1, maxWaitMs: 10_000 },
    // A PDF address an open-access service named: on a shared server, public addresses only.
    publicOnly: deps.sharedState !== undefined,
  });
  const host = new URL(url).host;
  return layer.send(
    {
      method: 'GET',
      url,
      server: host,
      headers: { Accept: 'application/pdf, */*;q=0.5', 'User-Agent': `Zoteus/${deps.version}` },
      resendable: true,
      call: newCall(deps.config.retryBudgetMs),
      failures: {
        rateLimited: (_seconds, cause) =>
          new ZoteusError(
            'rate_limited',
            `the server answered HTTP ${cause.kind === 'status' ? cause.status : 429}`,
          ),
        unreachable: (reason) => new ZoteusError('network_error', `could not be downloaded: ${reason}`),
      },
    },
    (answer) => answer,
  );
}

async function readSome(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}

type PdfJs = typeof PdfJsModule;
let pdfjs: Promise<PdfJs> | undefined;

/** Pages > 0 and the first pages mention the title or the DOI; undefined when it passes, else why not. */
async function checkPdf(data: Uint8Array, item: { doi: string; title: string }): Promise<string | undefined> {
  const lib = await (pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs'));
  let doc: Awaited<ReturnType<PdfJs['getDocument']>['promise']>;
  try {
    doc = await lib.getDocument({
      data,
      verbosity: 0,
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      stopAtErrors: false,
    }).promise;
  } catch (error) {
    return `a PDF that cannot be read (${(error as Error).message})`;
  }
  try {
    if (doc.numPages < 1) return 'a PDF without pages';
    const pages = Math.min(CHECKED_PAGES, doc.numPages);
    let text = '';
    for (let n = 1; n <= pages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      for (const it of content.items) if ('str' in it) text += `${it.str}${it.hasEOL ? '\n' : ' '}`;
      page.cleanup();
    }
    if (mentions(text, item)) return undefined;
    const said = item.title ? `the title "${item.title}" nor ` : '';
    return `a PDF of something else: its first ${pages === 1 ? 'page mentions' : `${pages} pages mention`} neither ${said}the DOI ${item.doi}`;
  } finally {
    await doc.destroy();
  }
}

/** Letters and digits only, lower-cased: spacing, hyphenation, punctuation and case do not count. */
export function normalizeForMatch(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');
}

/**
 * Whether the text mentions the item: its DOI, or its title (a long enough title before a
 * colon also counts, for PDFs that print the main title and the subtitle apart).
 */
export function mentions(text: string, item: { doi: string; title: string }): boolean {
  const hay = normalizeForMatch(text);
  const doi = normalizeForMatch(item.doi);
  if (doi.length > 0 && hay.includes(doi)) return true;
  const title = normalizeForMatch(item.title);
  if (title.length >= 8 && hay.includes(title)) return true;
  const main = normalizeForMatch(item.title.split(/[:?!]\s/)[0] ?? '');
  return main.length >= 20 && main !== title && hay.includes(main);
}
