/**
 * The fields of an item's text in the index, in FTS5 column order (bm25 weights follow it).
 * A module of its own so tool declarations can name them without loading the index code.
 */
export const TEXT_COLUMNS = [
  'title',
  'creators',
  'abstract',
  'tags',
  'notes',
  'annotations',
  'fields',
  'fulltext',
] as const;

export type TextColumn = (typeof TEXT_COLUMNS)[number];
