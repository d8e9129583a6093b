/**
 * Published versions of preprints, from the open infrastructure, batched (metadata/*):
 * 1. Crossref's record of the preprint DOI: its `is-preprint-of` relation;
 * 2. arXiv's record: the journal DOI its authors added (`arxiv:doi`);
 * 3. Crossref works that name the preprint in their `has-preprint` relation (filtered by
 *    `relation.object`, 50 preprints a request);
 * 4. OpenAlex (with an API key): the work the preprint DOI belongs to, when it is another
 *    DOI's, or a location that is the published version;
 * 5. Semantic Scholar, last and only with its API key (its anonymous pool is shared and
 *    throttled): the journal DOI its paper record carries for the preprint's arXiv id or DOI.
 * The published DOI's own Crossref record then gives the fields. Early-access articles are
 * their own DOI's record: a match once Crossref has a volume, issue or pages.
 * Each step reports its progress (start, each answered batch, complete) through deps.progress,
 * as a phase of its own, so a long lookup is never silent; a candidate without a match is
 * told which services were asked about it, or why none was.
 */
import type { ZoteusError } from '../errors.js';
import type { WebApiItem } from '../library/port.js';
import { itemTypeForCsl } from '../items/csl.js';
import type { ItemSchema } from '../items/schema.js';
import type { Deps } from '../tool.js';
import {
  crossrefWorks,
  toCrossrefWork,
  CROSSREF_BATCH,
  type CrossrefWork,
  type CrossrefResults,
} from '../metadata/crossref.js';
import { arxivRecords } from '../metadata/arxiv.js';
import { openAlexSkipped, openAlexWorks } from '../metadata/openalex.js';
import { semanticScholarPapers } from '../metadata/semantic-scholar.js';
import { chunk, obj, parseObject, serviceCall, serviceClient, serviceFailed } from '../metadata/service.js';
import type { Candidate } from './candidates.js';
import { preprintServerOfDoi } from './candidates.js';
import { titleSimilarity } from './similarity.js';

export interface Evidence {
  source: 'crossref' | 'arxiv' | 'openalex' | 'semantic-scholar';
  /** How the source ties the two: is-preprint-of, has-preprint, arxiv-doi, openalex-work, s2-doi, same-doi. */
  relation: string;
  doi: string;
  title: string;
  venue?: string | undefined;
  year?: string | undefined;
  /** Title similarity with the item (0–1). */
  similarity: number;
}

export interface SourceNote {
  service: string;
  /** Requests sent to it by this check (cached answers cost none), where counted. */
  requests?: number | undefined;
  note?: string | undefined;
}

export interface Found {
  matches: Map<string, { evidence: Evidence; item: Record<string, unknown> }>;
  /** Candidates with no match: why, in the user's terms. */
  misses: Map<string, string>;
  /** Candidates no source could answer for (the service's error). */
  failures: Map<string, ZoteusError>;
  sources: SourceNote[];
}

/** Crossref's work types → CSL types (Zotero's schema maps CSL types to item types). */
const CSL_OF_CROSSREF: Record<string, string> = {
  'journal-article': 'article-journal',
  'proceedings-article': 'paper-conference',
  'book-chapter': 'chapter',
  book: 'book',
  monograph: 'book',
  'edited-book': 'book',
  report: 'report',
  dissertation: 'thesis',
};

function isError(value: unknown): value is ZoteusError {
  return value instanceof Error;
}

/** The Zotero fields (base names) of a published work. */
export function publishedFields(schema: ItemSchema, work: CrossrefWork): Record<string, unknown> {
  return {
    itemType: itemTypeForCsl(schema, CSL_OF_CROSSREF[work.type ?? ''] ?? 'article-journal'),
    publicationTitle: work.containerTitle,
    volume: work.volume,
    issue: work.issue,
    pages: work.page,
    date: work.issued,
    DOI: work.doi,
    url: `https://doi.org/${work.doi}`,
  };
}

function isPublishedWork(work: CrossrefWork): boolean {
  return work.type !== 'posted-content' && preprintServerOfDoi(work.doi) === undefined;
}

type Entry = { item: WebApiItem; candidate: Candidate };

/** The progress phases of the lookup, one per step, in the order they run. */
export const LOOKUP_PHASES = {
  records: 'crossref_records',
  arxiv: 'arxiv_records',
  hasPreprint: 'crossref_has_preprint',
  openalex: 'openalex_works',
  semanticScholar: 'semantic_scholar_papers',
  published: 'crossref_published',
} as const;

/** One step's progress: `start`, a `progress` per answered batch, `complete` with its failures. */
function stepProgress(deps: Deps, phase: string, total: number) {
  if (total === 0) return { tick: () => undefined, end: () => undefined };
  deps.progress({ event: 'start', phase, done: 0, total });
  return {
    tick: (done: number) => deps.progress({ event: 'progress', phase, done: Math.min(done, total), total }),
    end: (failed: number) =>
      deps.progress({ event: 'complete', phase, done: total, total, succeeded: total - failed, failed }),
  };
}

function failures(results: ReadonlyMap<string, unknown>): number {
  let n = 0;
  for (const value of results.values()) if (isError(value)) n += 1;
  return n;
}

const SERVICE_ORDER = ['Crossref', 'arXiv', 'OpenAlex', 'Semantic Scholar'] as const;

/** Why Semantic Scholar was not asked, when it was not. */
export function semanticScholarSkipped(deps: Pick<Deps, 'config'>): string | undefined {
  return deps.config.metadata.semanticScholarKey === undefined
    ? 'Semantic Scholar was not asked for the candidates still without a match: it is asked only with an API key (set ZOTEUS_SEMANTIC_SCHOLAR_API_KEY).'
    : undefined;
}

/** Why a candidate without a match has none: what was asked about it, or why nothing was. */
function missWhy(candidate: Candidate, asked: ReadonlySet<string> | undefined): string {
  const names = SERVICE_ORDER.filter((s) => asked?.has(s));
  if (names.length) return `No published version was found (${names.join(', ')}).`;
  const why = candidate.server
    ? `its ${candidate.server} URL made it a candidate, but it has no DOI or arXiv id`
    : 'it has no DOI or arXiv id';
  return `Nothing was asked: ${why} to look a published version up by.`;
}

export async function findPublished(
  deps: Deps,
  schema: ItemSchema,
  candidates: readonly Entry[],
): Promise<Found> {
  const found: Found = { matches: new Map(), misses: new Map(), failures: new Map(), sources: [] };
  if (candidates.length === 0) return found;
  const crossref = await serviceClient(deps, 'crossref');
  const arxiv = await serviceClient(deps, 'arxiv');
  const sentBefore = { crossref: crossref.sent, arxiv: arxiv.sent };
  const errors = new Map<string, ZoteusError>();
  /** Candidate key → the published DOI and how it was found. */
  const links = new Map<string, { doi: string; source: Evidence['source']; relation: string }>();
  /** Candidate key → the services asked about it. */
  const asked = new Map<string, Set<string>>();
  const ask = (key: string, service: string) => {
    const set = asked.get(key) ?? new Set<string>();
    set.add(service);
    asked.set(key, set);
  };
  const lower = (doi: string | undefined) => doi?.toLowerCase();

  // 1. Crossref records of the preprint DOIs (and early-access DOIs, which are their own answer).
  const ownDois = candidates.flatMap((c) =>
    c.candidate.doi && !/^10\.48550\//i.test(c.candidate.doi) ? [c.candidate.doi] : [],
  );
  const ownStep = stepProgress(
    deps,
    LOOKUP_PHASES.records,
    new Set(ownDois.map((d) => d.toLowerCase())).size,
  );
  const own: CrossrefResults = ownDois.length
    ? await crossrefWorks(deps, ownDois, { onProgress: ownStep.tick })
    : new Map();
  ownStep.end(failures(own));
  for (const { item, candidate } of candidates) {
    const answer = own.get(lower(candidate.doi) ?? '');
    if (answer !== undefined) ask(item.key, 'Crossref');
    if (isError(answer)) errors.set(item.key, answer);
    if (!answer || isError(answer) || candidate.reason === 'early_access') continue;
    const target = answer.relations['is-preprint-of']?.find((r) => r.idType === 'doi');
    if (target)
      links.set(item.key, { doi: target.id.toLowerCase(), source: 'crossref', relation: 'is-preprint-of' });
  }

  // 2. arXiv's journal DOIs.
  const arxivIds = candidates.flatMap((c) =>
    c.candidate.arxiv && !links.has(c.item.key) ? [c.candidate.arxiv] : [],
  );
  const arxivStep = stepProgress(
    deps,
    LOOKUP_PHASES.arxiv,
    new Set(arxivIds.map((i) => i.toLowerCase())).size,
  );
  const records: Awaited<ReturnType<typeof arxivRecords>> = arxivIds.length
    ? await arxivRecords(deps, arxivIds, { onProgress: arxivStep.tick })
    : new Map();
  arxivStep.end(failures(records));
  for (const { item, candidate } of candidates) {
    if (!candidate.arxiv || links.has(item.key)) continue;
    ask(item.key, 'arXiv');
    const record = records.get(candidate.arxiv.toLowerCase());
    if (isError(record)) errors.set(item.key, record);
    else if (record?.doi && !/^10\.48550\//i.test(record.doi))
      links.set(item.key, { doi: record.doi, source: 'arxiv', relation: 'arxiv-doi' });
  }

  // 3. Works that name the preprint as theirs (has-preprint), 50 preprints a request.
  const preprintIds = new Map<string, string>();
  for (const { item, candidate } of candidates) {
    if (candidate.reason === 'early_access' || links.has(item.key)) continue;
    const doi =
      candidate.doi ??
      (candidate.arxiv ? `10.48550/arxiv.${candidate.arxiv.replace(/v\d+$/i, '')}` : undefined);
    if (doi && !doi.includes(',')) {
      preprintIds.set(doi.toLowerCase(), item.key);
      ask(item.key, 'Crossref');
    }
  }
  const call = serviceCall(deps);
  const base = deps.config.resolvers.crossref;
  const mailto = deps.config.resolvers.mailto;
  const namedStep = stepProgress(deps, LOOKUP_PHASES.hasPreprint, preprintIds.size);
  let named = 0;
  let namedFailed = 0;
  for (const batch of chunk([...preprintIds.keys()], CROSSREF_BATCH)) {
    const filter = [
      'relation.type:has-preprint',
      ...batch.map((d) => `relation.object:${encodeURIComponent(d)}`),
    ].join(',');
    try {
      const answer = await crossref.request(call, {
        url: `${base}/works?filter=${filter}&rows=${Math.max(100, batch.length * 2)}&select=DOI,type,relation${mailto ? `&mailto=${encodeURIComponent(mailto)}` : ''}`,
        label: `${base}/works?filter=relation.object:… (${batch.length} preprints)`,
        headers: { Accept: 'application/json' },
      });
      if (answer.status !== 200) throw serviceFailed(crossref.name, answer.status);
      const items = obj(parseObject(crossref, answer.text).message).items;
      for (const raw of Array.isArray(items) ? items : []) {
        const work = toCrossrefWork(obj(raw));
        if (!work) continue;
        for (const rel of work.relations['has-preprint'] ?? []) {
          const key = preprintIds.get(rel.id.toLowerCase());
          if (key && !links.has(key))
            links.set(key, { doi: work.doi, source: 'crossref', relation: 'has-preprint' });
        }
      }
    } catch (error) {
      if (!isError(error)) throw error;
      namedFailed += batch.length;
      for (const doi of batch) {
        const key = preprintIds.get(doi) as string;
        if (!errors.has(key)) errors.set(key, error as ZoteusError);
      }
    }
    named += batch.length;
    namedStep.tick(named);
  }
  namedStep.end(namedFailed);

  // 4. OpenAlex, for what is still open (only with its API key).
  const openDois = candidates.flatMap((c) =>
    c.candidate.reason !== 'early_access' && c.candidate.doi && !links.has(c.item.key)
      ? [c.candidate.doi]
      : [],
  );
  const openalexNote = openAlexSkipped(deps);
  let openalexRequests: number | undefined;
  if (openDois.length && !openalexNote) {
    const client = await serviceClient(deps, 'openalex', [deps.config.metadata.openalexKey]);
    const before = client.sent;
    const openStep = stepProgress(
      deps,
      LOOKUP_PHASES.openalex,
      new Set(openDois.map((d) => d.toLowerCase())).size,
    );
    const openalex = await openAlexWorks(deps, openDois, { onProgress: openStep.tick });
    openStep.end(openalex.works ? failures(openalex.works) : 0);
    openalexRequests = client.sent - before;
    if (openalex.skipped === undefined) {
      for (const { item, candidate } of candidates) {
        if (!candidate.doi || links.has(item.key) || candidate.reason === 'early_access') continue;
        ask(item.key, 'OpenAlex');
        const work = openalex.works.get(candidate.doi.toLowerCase());
        if (isError(work)) {
          if (!errors.has(item.key)) errors.set(item.key, work);
          continue;
        }
        if (!work) continue;
        const published =
          (work.doi && work.doi !== candidate.doi.toLowerCase() && work.type !== 'preprint'
            ? work.doi
            : undefined) ??
          work.locations
            .filter((l) => l.version === 'publishedVersion' && l.isPublished)
            .map((l) => /doi\.org\/(10\.\S+)$/i.exec(l.landingPageUrl ?? '')?.[1]?.toLowerCase())
            .find((d) => d !== undefined && d !== candidate.doi?.toLowerCase());
        if (published) links.set(item.key, { doi: published, source: 'openalex', relation: 'openalex-work' });
      }
    }
  }

  // 5. Semantic Scholar, last, for what is still open (only with its API key).
  const s2Ids = new Map<string, string>();
  for (const { item, candidate } of candidates) {
    if (candidate.reason === 'early_access' || links.has(item.key)) continue;
    const id = candidate.arxiv
      ? `ARXIV:${candidate.arxiv.replace(/v\d+$/i, '')}`
      : candidate.doi
        ? `DOI:${candidate.doi}`
        : undefined;
    if (id) s2Ids.set(item.key, id.toLowerCase());
  }
  const s2Note = s2Ids.size ? semanticScholarSkipped(deps) : undefined;
  let s2Requests: number | undefined;
  if (s2Ids.size && !s2Note) {
    const client = await serviceClient(deps, 'semantic-scholar', [deps.config.metadata.semanticScholarKey]);
    const before = client.sent;
    const s2Step = stepProgress(deps, LOOKUP_PHASES.semanticScholar, new Set(s2Ids.values()).size);
    const papers = await semanticScholarPapers(deps, [...s2Ids.values()], { onProgress: s2Step.tick });
    s2Step.end(failures(papers));
    s2Requests = client.sent - before;
    for (const { item, candidate } of candidates) {
      const id = s2Ids.get(item.key);
      if (id === undefined) continue;
      ask(item.key, 'Semantic Scholar');
      const paper = papers.get(id);
      if (isError(paper)) {
        if (!errors.has(item.key)) errors.set(item.key, paper);
        continue;
      }
      const doi = paper?.doi;
      // Its record of a preprint carries the preprint's own DOI until a journal's replaces it.
      if (doi && doi !== lower(candidate.doi) && preprintServerOfDoi(doi) === undefined)
        links.set(item.key, { doi, source: 'semantic-scholar', relation: 's2-doi' });
    }
  }

  // The published records, batched; early access reads its own record from step 1.
  const linked = [...new Set([...links.values()].map((l) => l.doi))].filter((d) => !own.has(d));
  const publishedStep = stepProgress(deps, LOOKUP_PHASES.published, linked.length);
  const published: CrossrefResults = linked.length
    ? await crossrefWorks(deps, linked, { onProgress: publishedStep.tick })
    : new Map();
  publishedStep.end(failures(published));
  const recordOf = (doi: string) => own.get(doi) ?? published.get(doi);
  for (const { item, candidate } of candidates) {
    const title = typeof item.data.title === 'string' ? item.data.title : '';
    if (candidate.reason === 'early_access') {
      const work = own.get(lower(candidate.doi) ?? '');
      if (isError(work)) found.failures.set(item.key, work);
      else if (!work) found.misses.set(item.key, `Crossref has no record of ${candidate.doi}.`);
      else if (!work.volume && !work.issue && !work.page)
        found.misses.set(item.key, 'Still in early access at Crossref: no volume, issue or pages yet.');
      else
        found.matches.set(item.key, {
          evidence: evidenceOf(work, 'crossref', 'same-doi', title),
          item: publishedFields(schema, work),
        });
      continue;
    }
    const link = links.get(item.key);
    if (!link) {
      const error = errors.get(item.key);
      if (error) found.failures.set(item.key, error);
      else found.misses.set(item.key, missWhy(candidate, asked.get(item.key)));
      continue;
    }
    const work = recordOf(link.doi);
    if (isError(work)) found.failures.set(item.key, work);
    else if (!work)
      found.misses.set(
        item.key,
        `${link.doi} (${link.relation}, from ${link.source}) has no Crossref record to take the fields from.`,
      );
    else if (!isPublishedWork(work))
      found.misses.set(
        item.key,
        `${link.doi} (${link.relation}) is itself a preprint, not a published version.`,
      );
    else
      found.matches.set(item.key, {
        evidence: evidenceOf(work, link.source, link.relation, title),
        item: publishedFields(schema, work),
      });
  }

  found.sources.push({ service: 'Crossref', requests: crossref.sent - sentBefore.crossref });
  if (arxivIds.length || arxiv.sent > sentBefore.arxiv)
    found.sources.push({ service: 'arXiv', requests: arxiv.sent - sentBefore.arxiv });
  found.sources.push({
    service: 'OpenAlex',
    ...(openalexRequests !== undefined ? { requests: openalexRequests } : {}),
    ...(openalexNote ? { note: openalexNote } : {}),
  });
  if (s2Requests !== undefined || s2Note)
    found.sources.push({
      service: 'Semantic Scholar',
      ...(s2Requests !== undefined ? { requests: s2Requests } : {}),
      ...(s2Note ? { note: s2Note } : {}),
    });
  return found;
}

function evidenceOf(
  work: CrossrefWork,
  source: Evidence['source'],
  relation: string,
  title: string,
): Evidence {
  return {
    source,
    relation,
    doi: work.doi,
    title: work.title ?? '',
    ...(work.containerTitle ? { venue: work.containerTitle } : {}),
    ...(work.issued ? { year: work.issued.slice(0, 4) } : {}),
    similarity: titleSimilarity(title, work.title ?? ''),
  };
}
