/**
 * CSL-JSON, the data model of the Citation Style Language (CSL 1.0.2 "csl-data"): what a CSL
 * processor reads. Zotero items become these (csl-json.ts) for citations, bibliographies and
 * the CSL-JSON export.
 */

/** A name: a person's parts, or `literal` for an organisation or a single-field name. */
export interface CslName {
  family?: string;
  given?: string;
  'non-dropping-particle'?: string;
  'dropping-particle'?: string;
  suffix?: string;
  literal?: string;
}

/** A date: one or two `[year, month?, day?]` parts (a range), or `literal` when it has no year. */
export interface CslDate {
  'date-parts'?: Array<[number, number?, number?] | number[]>;
  season?: number | string;
  circa?: boolean | number | string;
  literal?: string;
  raw?: string;
}

/** One item: `id` and `type`, then variables (text and numbers, names, dates) by CSL name. */
export interface CslItem {
  id: string;
  type: string;
  [variable: string]: string | number | CslName[] | CslDate | Record<string, unknown> | undefined;
}
