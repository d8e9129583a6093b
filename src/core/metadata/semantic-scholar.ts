/**
 * Semantic Scholar papers, optional: its batch endpoint (`POST /paper/batch`, up to 500 ids
 * per request, answers in input order, null for an unknown id), one request a second, with
 * ZOTEUS_SEMANTIC_SCHOLAR_API_KEY in `x-api-key` when set (without one the shared anonymous
 * pool answers 429 often: waited out within the retry budget). Ids are Semantic Scholar's
 * (`DOI:10.…`, `ARXIV:2101.00001`). Answers are cached a day (cache.ts).
 */
import { ZoteusError } from '../errors.js';
import type { Deps } from '../tool.js';
import { metadataCache } from './cache.js';
import { chunk, notJson, obj, serviceCall, serviceClient, serviceFailed, str } from './service.js';

export const S2_BATCH = 500;

export interface SemanticScholarPaper {
  paperId: string;
  title: string | undefined;
  doi: string | undefined;
  arxiv: string | undefined;
  venue: string | undefined;
  journal: { name?: string; volume?: string; pages?: string };
  publicationTypes: string[];
  publicationDate: string | undefined;
  year: number | undefined;
}

const FIELDS = 'title,externalIds,venue,journal,publicationTypes,publicationDate,year';

export function toSemanticScholarPaper(value: Record<string, unknown>): SemanticScholarPaper | undefined {
  const paperId = str(value.paperId);
  if (!paperId) return undefined;
  const ids = obj(value.externalIds);
  const journal = obj(value.journal);
  const j: SemanticScholarPaper['journal'] = {};
  for (const k of ['name', 'volume', 'pages'] as const) {
    const v = str(journal[k]);
    if (v) j[k] = v;
  }
  return {
    paperId,
    title: str(value.title),
    doi: str(ids.DOI)?.toLowerCase(),
    arxiv: str(ids.ArXiv),
    venue: str(value.venue),
    journal: j,
    publicationTypes: Array.isArray(value.publicationTypes)
      ? value.publicationTypes.filter((t): t is string => typeof t === 'string')
      : [],
    publicationDate: str(value.publicationDate),
    year: typeof value.year === 'number' ? value.year : undefined,
  };
}

function isPaper(value: unknown): value is SemanticScholarPaper {
  const v = obj(value);
  return typeof v.paperId === 'string' && Array.isArray(v.publicationTypes);
}

/** The papers of `ids` (`DOI:…`, `ARXIV:…`; keyed lower-cased): ⌈n/500⌉ batch requests for those not cached. */
export async function semanticScholarPapers(
  deps: Deps,
  ids: readonly string[],
  options: { onProgress?: (done: number) => void } = {},
): Promise<Map<string, SemanticScholarPaper | null | ZoteusError>> {
  const out = new Map<string, SemanticScholarPaper | null | ZoteusError>();
  const cache = metadataCache(deps, 'semantic-scholar', isPaper);
  const wanted = [...new Set(ids.map((i) => i.toLowerCase()))];
  const missing = wanted.filter((id) => {
    const cached = cache.get(id);
    if (cached !== undefined) out.set(id, cached);
    return cached === undefined;
  });
  if (missing.length === 0) return out;
  const key = deps.config.metadata.semanticScholarKey;
  const client = await serviceClient(deps, 'semantic-scholar', [key]);
  const call = serviceCall(deps);
  let done = wanted.length - missing.length;
  for (const batch of chunk(missing, S2_BATCH)) {
    try {
      const answer = await client.request(call, {
        method: 'POST',
        url: `${deps.config.metadata.semanticScholar}/paper/batch?fields=${FIELDS}`,
        headers: {
          Accept: 'application/json',
          'Content-Type': 'application/json',
          ...(key ? { 'x-api-key': key } : {}),
        },
        body: JSON.stringify({ ids: batch }),
      });
      if (answer.status !== 200) throw serviceFailed(client.name, answer.status);
      let list: unknown;
      try {
        list = JSON.parse(answer.text) as unknown;
      } catch {
        throw notJson(client.name, client.service);
      }
      if (!Array.isArray(list) || list.length !== batch.length) throw notJson(client.name, client.service);
      for (const [i, id] of batch.entries()) {
        const paper = list[i] === null ? null : (toSemanticScholarPaper(obj(list[i])) ?? null);
        out.set(id, paper);
        await cache.put(id, paper);
      }
    } catch (error) {
      if (!(error instanceof ZoteusError)) throw error;
      for (const id of batch) out.set(id, error);
    }
    done += batch.length;
    options.onProgress?.(done);
  }
  return out;
}
