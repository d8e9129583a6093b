/**
 * Which items may have a newer, published version: preprints by type, items whose DOI or URL
 * belongs to a preprint server, and journal articles still in early access (a DOI but no
 * volume, issue or pages). Pure: it reads the item's data only.
 */
import { parseArxiv, parseDoi } from '../items/identifiers.js';

export type CandidateReason = 'preprint_type' | 'preprint_server' | 'early_access';

export interface Candidate {
  reason: CandidateReason;
  /** The preprint server the DOI or URL belongs to, when known ("arXiv", "bioRxiv", …). */
  server?: string | undefined;
  doi?: string | undefined;
  arxiv?: string | undefined;
}

/** DOI prefixes of preprint servers (a prefix and, where the prefix is shared, a pattern). */
const DOI_SERVERS: readonly { server: string; test: RegExp }[] = [
  { server: 'arXiv', test: /^10\.48550\/arxiv\./i },
  // 10.1101 is Cold Spring Harbor's: bioRxiv and medRxiv DOIs are dated or six digits.
  { server: 'bioRxiv/medRxiv', test: /^10\.1101\/(\d{4}\.\d{2}\.\d{2}\.\d+|\d{6})(v\d+)?$/i },
  { server: 'SSRN', test: /^10\.2139\/ssrn\./i },
  { server: 'Research Square', test: /^10\.21203\/rs\./i },
  {
    server: 'OSF Preprints',
    test: /^10\.(31219|31234|31235|31222|31223|31224|31226|31227|31228|31229|31230|31231|31232|31233|31236|31237|33767|35542)\//i,
  },
  { server: 'ChemRxiv', test: /^10\.26434\/chemrxiv/i },
  { server: 'Preprints.org', test: /^10\.20944\/preprints/i },
  { server: 'Authorea', test: /^10\.22541\/au\./i },
  { server: 'TechRxiv', test: /^10\.36227\/techrxiv/i },
  { server: 'SciELO Preprints', test: /^10\.1590\/scielopreprints/i },
  { server: 'Zenodo', test: /^10\.5281\/zenodo\./i },
];

const URL_SERVERS: readonly { server: string; test: RegExp }[] = [
  { server: 'arXiv', test: /^https?:\/\/(www\.|export\.)?arxiv\.org\//i },
  { server: 'bioRxiv/medRxiv', test: /^https?:\/\/(www\.)?(biorxiv|medrxiv)\.org\//i },
  { server: 'SSRN', test: /^https?:\/\/(papers\.|www\.)?ssrn\.com\//i },
  { server: 'Research Square', test: /^https?:\/\/(www\.)?researchsquare\.com\//i },
  { server: 'OSF Preprints', test: /^https?:\/\/(www\.)?osf\.io\/(preprints\/)?/i },
  { server: 'ChemRxiv', test: /^https?:\/\/(www\.)?chemrxiv\.org\//i },
  { server: 'Preprints.org', test: /^https?:\/\/(www\.)?preprints\.org\//i },
  { server: 'TechRxiv', test: /^https?:\/\/(www\.)?techrxiv\.org\//i },
];

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

/** The server a DOI belongs to, when it is a preprint server's. */
export function preprintServerOfDoi(doi: string): string | undefined {
  return DOI_SERVERS.find((s) => s.test.test(doi))?.server;
}

/** The item's DOI: its DOI field, else a `DOI:` line in Extra (where Zotero users keep it for types without one). */
export function doiOf(data: Record<string, unknown>): string | undefined {
  const field = parseDoi(text(data.DOI));
  if (field) return field;
  const line = /^DOI:\s*(\S+)\s*$/im.exec(text(data.extra));
  return line ? parseDoi(line[1] as string) : undefined;
}

/** The item's arXiv id: from an arXiv DOI, the archive ID (`arXiv:2101.00001`), the URL, or Extra. */
export function arxivOf(data: Record<string, unknown>): string | undefined {
  const doi = doiOf(data);
  if (doi && /^10\.48550\/arxiv\./i.test(doi)) return parseArxiv(doi.replace(/^10\.48550\/arxiv\./i, ''));
  for (const value of [text(data.archiveID), text(data.url)]) {
    if (!value) continue;
    if (/arxiv/i.test(value)) {
      const id = parseArxiv(value.replace(/^arxiv:/i, ''));
      if (id) return id;
    }
  }
  const line = /^arXiv:\s*(\S+)\s*$/im.exec(text(data.extra));
  return line ? parseArxiv(line[1] as string) : undefined;
}

/** Why the item may have a published version, or undefined when it is not a candidate. */
export function candidateOf(data: Record<string, unknown>): Candidate | undefined {
  const doi = doiOf(data);
  const arxiv = arxivOf(data);
  const url = text(data.url);
  const server =
    (doi ? preprintServerOfDoi(doi) : undefined) ??
    URL_SERVERS.find((s) => s.test.test(url))?.server ??
    (arxiv ? 'arXiv' : undefined);
  const base = { ...(server ? { server } : {}), ...(doi ? { doi } : {}), ...(arxiv ? { arxiv } : {}) };
  if (data.itemType === 'preprint') return { reason: 'preprint_type', ...base };
  // A journal DOI means the item already is the published version (or its early access).
  const journalDoi = doi !== undefined && preprintServerOfDoi(doi) === undefined;
  if (server && !journalDoi) return { reason: 'preprint_server', ...base };
  if (
    data.itemType === 'journalArticle' &&
    journalDoi &&
    !text(data.volume) &&
    !text(data.issue) &&
    !text(data.pages)
  ) {
    return { reason: 'early_access', doi };
  }
  return undefined;
}
