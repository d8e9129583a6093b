/**
 * What OpenAlex adds to an enrichment, for DOIs whose Crossref record left wanted fields empty:
 * one singleton lookup per DOI (free under its 2026 pricing), with its API key
 * (ZOTEUS_OPENALEX_API_KEY; without it nothing is asked: metadata/openalex.ts says why),
 * cached a day. It gives the abstract (rebuilt from its inverted index), the pages (biblio),
 * and the ISSNs and publisher of the work's source.
 */
import type { ZoteusError } from '../errors.js';
import { openAlexLookup } from '../metadata/openalex.js';
import { obj, str } from '../metadata/service.js';
import type { Deps } from '../tool.js';

export interface OpenAlexFill {
  abstractNote?: string;
  ISSN?: string;
  pages?: string;
  publisher?: string;
}

export type OpenAlexFills =
  | { skipped: string; fills?: undefined }
  | { skipped?: undefined; fills: Map<string, OpenAlexFill | null | ZoteusError> };

const FIELDS = 'id,doi,abstract_inverted_index,biblio,primary_location';

/** The abstract of OpenAlex's inverted index (word → positions). */
export function abstractOf(index: unknown): string | undefined {
  const words: string[] = [];
  for (const [word, positions] of Object.entries(obj(index))) {
    if (!Array.isArray(positions)) continue;
    for (const p of positions) if (Number.isInteger(p) && p >= 0 && p < 100_000) words[p as number] = word;
  }
  const text = words.filter((w) => w !== undefined).join(' ');
  return text.trim() ? text.trim() : undefined;
}

export function fillOf(work: Record<string, unknown>): OpenAlexFill {
  const biblio = obj(work.biblio);
  const first = str(biblio.first_page);
  const last = str(biblio.last_page);
  const source = obj(obj(work.primary_location).source);
  const issn = Array.isArray(source.issn)
    ? [...new Set(source.issn.filter((s): s is string => typeof s === 'string'))]
    : [];
  const fill: OpenAlexFill = {};
  const abstract = abstractOf(work.abstract_inverted_index);
  if (abstract) fill.abstractNote = abstract;
  if (issn.length) fill.ISSN = issn.join(', ');
  if (first) fill.pages = last && last !== first ? `${first}-${last}` : first;
  const publisher = str(source.host_organization_name);
  if (publisher) fill.publisher = publisher;
  return fill;
}

function isFill(value: unknown): value is OpenAlexFill {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** OpenAlex's fills of `dois` (one lookup per DOI not cached), or why it was not asked. */
export async function openAlexFills(deps: Deps, dois: readonly string[]): Promise<OpenAlexFills> {
  const found = await openAlexLookup(deps, dois, {
    select: FIELDS,
    read: fillOf,
    valid: isFill,
    cacheId: (doi) => `enrich:${doi}`,
  });
  return found.skipped !== undefined ? { skipped: found.skipped } : { fills: found.values };
}
