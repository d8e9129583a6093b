/**
 * The fields an enrichment may fill, and the offline checks of an enrich call (light: the
 * declaration loads it). Names are Zotero's base fields; `abstract` is accepted for
 * abstractNote, and case does not matter.
 */
import { paramRef } from '../call/refs.js';
import { didYouMean } from '../did-you-mean.js';
import { ZoteusError } from '../errors.js';
import { checkUpdateStatus, type UpdateStatusScope } from '../versions/check.js';

/** What enrich fills, in the order its answers show them. */
export const ENRICH_FIELDS = ['DOI', 'abstractNote', 'ISSN', 'pages', 'publisher'] as const;
export type EnrichField = (typeof ENRICH_FIELDS)[number];

const NAMES: Record<string, EnrichField> = {
  doi: 'DOI',
  abstract: 'abstractNote',
  abstractnote: 'abstractNote',
  issn: 'ISSN',
  pages: 'pages',
  publisher: 'publisher',
};

/** The names a caller may give (what "did you mean" chooses from). */
const SPOKEN = ['DOI', 'abstract', 'abstractNote', 'ISSN', 'pages', 'publisher'];

/**
 * The fields asked for (entries may hold several, comma-separated), in ENRICH_FIELDS order;
 * every field when none is given. An unknown name is a validation_error with the closest.
 */
export function enrichFields(given: readonly string[] | undefined): EnrichField[] {
  if (given === undefined) return [...ENRICH_FIELDS];
  const names = given
    .flatMap((entry) => entry.split(','))
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => NAMES[n.toLowerCase()] === undefined);
  if (names.length === 0 || unknown.length > 0) {
    const first = unknown[0];
    const near = first === undefined ? '' : didYouMean(first, SPOKEN);
    throw new ZoteusError(
      'validation_error',
      first === undefined
        ? `${paramRef('fields')} names no field.`
        : `${paramRef('fields')} ${unknown.map((n) => `'${n}'`).join(', ')} ${unknown.length === 1 ? 'is not a field' : 'are not fields'} enrichment fills${near ? ` (${near})` : ''}.`,
      {
        field: 'fields',
        hint: 'Enrichment fills DOI, abstract, ISSN, pages and publisher (all of them when fields is left out).',
      },
    );
  }
  const wanted = new Set(names.map((n) => NAMES[n.toLowerCase()] as EnrichField));
  return ENRICH_FIELDS.filter((f) => wanted.has(f));
}

export interface EnrichScope extends UpdateStatusScope {
  fields?: string[] | undefined;
}

/** Offline checks: the fields, one scope (none with a plan), a plan only with apply. */
export function checkEnrich(input: EnrichScope): void {
  enrichFields(input.fields);
  if (input.plan_id !== undefined && input.fields !== undefined)
    throw new ZoteusError(
      'validation_error',
      `A plan holds its own fields: give the plan id without ${paramRef('fields')}.`,
      { field: 'fields' },
    );
  checkUpdateStatus(input);
}
