/**
 * Crossref's `query.bibliographic` search in the loopback fake: works ranked by how many of the
 * query's words their title, authors' family names and year hold (a stand-in for Crossref's
 * relevance), best first, each with a `score` as Crossref gives one; works sharing no word are
 * not hits. Test code only.
 */

function words(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1);
}

function haystack(work: Record<string, unknown>): Set<string> {
  const title = Array.isArray(work.title) ? work.title.join(' ') : String(work.title ?? '');
  const authors = Array.isArray(work.author)
    ? (work.author as Array<Record<string, unknown>>).map((a) => String(a.family ?? a.name ?? '')).join(' ')
    : '';
  const parts = (work.issued as { 'date-parts'?: unknown[][] } | undefined)?.['date-parts']?.[0] ?? [];
  return new Set(words(`${title} ${authors} ${parts.join(' ')}`));
}

/** The top `rows` works for `query`, each with its `score`. */
export function bibliographicSearch(
  works: Iterable<Record<string, unknown>>,
  query: string,
  rows: number,
): Array<Record<string, unknown>> {
  const asked = words(query);
  const scored: Array<{ work: Record<string, unknown>; score: number }> = [];
  for (const work of works) {
    const have = haystack(work);
    const score = asked.filter((w) => have.has(w)).length;
    if (score > 0) scored.push({ work, score });
  }
  scored.sort((a, b) => b.score - a.score || String(a.work.DOI).localeCompare(String(b.work.DOI)));
  return scored
    .slice(0, rows)
    .map(({ work, score }) => ({ ...work, score: Math.round(score * 12.5 * 100) / 100 }));
}
