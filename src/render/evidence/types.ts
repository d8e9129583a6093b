/**
 * The evidence table's row, as the renderers see it: the tool's validated input row. Kept
 * free of zod so that the renderers stay pure functions of plain data.
 */

export const COVERAGE_VALUES = ['passage', 'abstract-only', 'unavailable'] as const;
export const SUPPORT_VALUES = ['supported', 'contradicted', 'uncertain', 'unverified'] as const;
export const FORMATS = ['markdown', 'csv'] as const;

/** How well the source was covered: a passage retrieved, only the abstract, or nothing. */
export type Coverage = (typeof COVERAGE_VALUES)[number];
export type Support = (typeof SUPPORT_VALUES)[number];
export type TableFormat = (typeof FORMATS)[number];

export interface EvidenceRow {
  item_key: string;
  study: string;
  finding: string;
  quotation?: string | null | undefined;
  page?: string | number | null | undefined;
  page_exact?: boolean | null | undefined;
  coverage: Coverage;
  support: Support;
  note?: string | null | undefined;
}

/** Counted from the rows, never taken from the caller. */
export interface CoverageCounts {
  passage: number;
  abstractOnly: number;
  unavailable: number;
}

/** Whether the locator is exact, approximate, unstated (a page without page_exact), or absent. */
export type LocatorQuality = 'exact' | 'approximate' | 'unstated' | 'none';
