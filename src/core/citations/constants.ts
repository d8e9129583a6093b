/**
 * What the citation tools' declarations need without loading citeproc-js: the output formats,
 * CSL's locator labels and the size of an answer (engine.ts and cite.ts use the same).
 */

export const CITATION_FORMATS = ['text', 'html', 'markdown'] as const;
export type CitationFormat = (typeof CITATION_FORMATS)[number];

/** The 29 locator labels of CSL 1.0.2. */
export const LOCATOR_LABELS = [
  'act',
  'appendix',
  'article-locator',
  'book',
  'canon',
  'chapter',
  'column',
  'elocation',
  'equation',
  'figure',
  'folio',
  'issue',
  'line',
  'note',
  'opus',
  'page',
  'paragraph',
  'part',
  'rule',
  'scene',
  'section',
  'sub-verbo',
  'supplement',
  'table',
  'timestamp',
  'title-locator',
  'verse',
  'version',
  'volume',
] as const;
export type LocatorLabel = (typeof LOCATOR_LABELS)[number];

/** Items one answer formats at most; a collection or search pages past it with `start`. */
export const CITE_MAX_ITEMS = 500;
export const CITE_DEFAULT_LIMIT = 100;
