/**
 * arXiv records by id, as arXiv's terms ask: `id_list` batches (up to ARXIV_BATCH ids per
 * request), one request at a time, one every 3 seconds (service.ts). What later checks need of
 * an entry: its versioned id, title, dates, and the journal DOI and reference its authors added
 * (`arxiv:doi`, `arxiv:journal_ref`). The Atom feed is read entry by entry, tag by tag; a feed
 * without the Atom root is `api_error` naming arXiv. Answers are cached a day (cache.ts).
 */
import { ZoteusError } from '../errors.js';
import { decodeEntities, squash } from '../items/html.js';
import { arxivBase } from '../items/identifiers.js';
import type { Deps } from '../tool.js';
import { metadataCache } from './cache.js';
import { chunk, obj, serviceCall, serviceClient, serviceFailed } from './service.js';

/** Ids per request (the API takes up to 2,000 results; URLs stay short). */
export const ARXIV_BATCH = 100;

export interface ArxivRecord {
  /** With its version, as the feed's `<id>` ends: `2101.00001v2`. */
  id: string;
  title: string;
  published: string | undefined;
  updated: string | undefined;
  /** The journal DOI the authors added. */
  doi: string | undefined;
  journalRef: string | undefined;
}

function tag(xml: string, name: string): string | undefined {
  const found = new RegExp(`<${name}(?:\\s[^>]*)?>([\\s\\S]*?)</${name}>`).exec(xml);
  if (found?.[1] === undefined) return undefined;
  const text = squash(decodeEntities(found[1].replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1')));
  return text || undefined;
}

/** The entries of an arXiv Atom feed; `api_error` when the text is no such feed. */
export function parseArxivRecords(xml: string): ArxivRecord[] {
  if (!/<feed[\s>]/.test(xml) || !/<\/feed>\s*$/.test(xml.trim()))
    throw new ZoteusError('api_error', 'arXiv answered with something that is not its Atom feed.', {
      retryable: true,
      hint: 'Retry in a moment; if it persists, check ZOTEUS_ARXIV_URL.',
    });
  const out: ArxivRecord[] = [];
  for (const match of xml.matchAll(/<entry(?:\s[^>]*)?>([\s\S]*?)<\/entry>/g)) {
    const body = match[1] ?? '';
    const idUrl = tag(body, 'id') ?? '';
    if (/\/api\/errors/.test(idUrl)) continue;
    const id = /\/abs\/(.+)$/.exec(idUrl)?.[1];
    const title = tag(body, 'title');
    if (!id || !title) continue;
    out.push({
      id,
      title,
      published: tag(body, 'published'),
      updated: tag(body, 'updated'),
      doi: tag(body, 'arxiv:doi')?.toLowerCase(),
      journalRef: tag(body, 'arxiv:journal_ref'),
    });
  }
  return out;
}

function isRecord(value: unknown): value is ArxivRecord {
  const v = obj(value);
  return typeof v.id === 'string' && typeof v.title === 'string';
}

/**
 * The arXiv records of `ids` (with or without a version; keyed as given, lower-cased): from
 * the cache, else ⌈n/100⌉ requests 3 seconds apart. A failed request fails only its ids.
 */
export async function arxivRecords(
  deps: Deps,
  ids: readonly string[],
  options: { onProgress?: (done: number) => void } = {},
): Promise<Map<string, ArxivRecord | null | ZoteusError>> {
  const out = new Map<string, ArxivRecord | null | ZoteusError>();
  const cache = metadataCache(deps, 'arxiv', isRecord);
  const wanted = [...new Set(ids.map((i) => i.toLowerCase()))];
  const missing = wanted.filter((id) => {
    const cached = cache.get(id);
    if (cached !== undefined) out.set(id, cached);
    return cached === undefined;
  });
  if (missing.length === 0) return out;
  const client = await serviceClient(deps, 'arxiv');
  const call = serviceCall(deps);
  let done = wanted.length - missing.length;
  for (const batch of chunk(missing, ARXIV_BATCH)) {
    const url = `${deps.config.resolvers.arxiv}/query?id_list=${batch.map(encodeURIComponent).join(',')}&max_results=${batch.length}`;
    try {
      const answer = await client.request(call, { url, headers: { Accept: 'application/atom+xml' } });
      if (answer.status !== 200) throw serviceFailed(client.name, answer.status);
      const records = parseArxivRecords(answer.text);
      for (const id of batch) {
        const versioned = /v\d+$/i.test(id);
        const record =
          records.find((r) =>
            versioned ? r.id.toLowerCase() === id : arxivBase(r.id).toLowerCase() === id,
          ) ?? null;
        out.set(id, record);
        await cache.put(id, record);
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
