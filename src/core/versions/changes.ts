/**
 * What a published version changes in an item: the fields of the preview table (itemType,
 * publicationTitle, volume, issue, pages, date, DOI, url), old → new, and the preprint's
 * identifier kept in Extra, where Zotero keeps what its fields have no place for: an `arXiv:`
 * line for an arXiv preprint, a `Preprint DOI:` line for any other preprint DOI the published
 * DOI replaces (a label no Zotero field or CSL variable claims, so it never stands in for the
 * item's DOI). Other Extra lines are kept as they are. Pure: data in, changes out.
 */
import type { ItemSchema } from '../items/schema.js';
import type { Candidate } from './candidates.js';

export interface FieldChange {
  field: string;
  from: string;
  to: string;
}

/** The fields a published version may set, in the order the preview shows them. */
export const STATUS_FIELDS = [
  'itemType',
  'publicationTitle',
  'volume',
  'issue',
  'pages',
  'date',
  'DOI',
  'url',
] as const;

/** Early access: the same article, so only what the issue gave it. */
const EARLY_ACCESS_FIELDS = new Set(['publicationTitle', 'volume', 'issue', 'pages']);

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

/**
 * The changes that make `data` the published version `published` (Zotero base fields, and
 * its itemType); empty when the item already says all of it. Fields the published version
 * leaves empty are kept.
 */
export function statusChanges(
  schema: ItemSchema,
  data: Record<string, unknown>,
  published: Record<string, unknown>,
  candidate: Candidate,
): FieldChange[] {
  const changes: FieldChange[] = [];
  const targetType = candidate.reason === 'early_access' ? text(data.itemType) : text(published.itemType);
  const spec = schema.types.get(targetType);
  for (const base of STATUS_FIELDS) {
    if (candidate.reason === 'early_access' && !EARLY_ACCESS_FIELDS.has(base)) continue;
    // The type's own name for a base field (proceedingsTitle for a conference paper's venue).
    const field = base === 'itemType' ? base : (spec?.byBase.get(base) ?? base);
    if (field !== 'itemType' && !spec?.fields.has(field)) continue;
    const to = text(published[base]).trim();
    const from = text(data[field]);
    if (!to || to === from) continue;
    // Early access fills what is empty; it never rewrites what the user has.
    if (candidate.reason === 'early_access' && from.trim()) continue;
    changes.push({ field, from, to });
  }
  if (changes.length === 0) return changes;
  const extra = extraWithPreprintIds(text(data.extra), candidate, text(published.DOI));
  if (extra !== text(data.extra)) changes.push({ field: 'extra', from: text(data.extra), to: extra });
  return changes;
}

/** The label of the Extra line that keeps a preprint DOI the published DOI replaces. */
export const PREPRINT_DOI_LABEL = 'Preprint DOI';

/**
 * Extra with the preprint's identifiers: an `arXiv:` line for its arXiv id unless Extra has
 * one, and a `Preprint DOI:` line for its (non-arXiv) DOI when the published version has
 * another DOI and Extra does not name it yet. Lines are added at the end; none is changed.
 */
function extraWithPreprintIds(extra: string, candidate: Candidate, publishedDoi: string): string {
  const lines: string[] = [];
  if (candidate.arxiv && !/^arXiv:\s*\S/im.test(extra)) lines.push(`arXiv: ${candidate.arxiv}`);
  const doi = candidate.doi;
  if (
    candidate.reason !== 'early_access' &&
    doi &&
    !/^10\.48550\//i.test(doi) &&
    doi.toLowerCase() !== publishedDoi.trim().toLowerCase() &&
    !extra.toLowerCase().includes(doi.toLowerCase())
  )
    lines.push(`${PREPRINT_DOI_LABEL}: ${doi}`);
  if (lines.length === 0) return extra;
  return extra.trim() ? `${extra.replace(/\s+$/, '')}\n${lines.join('\n')}` : lines.join('\n');
}

/** The fields a type change drops (not in the new type), for the preview to show. */
export function droppedByType(
  schema: ItemSchema,
  data: Record<string, unknown>,
  changes: readonly FieldChange[],
): FieldChange[] {
  const type = changes.find((c) => c.field === 'itemType')?.to;
  if (!type) return [];
  const valid = new Set(schema.types.get(type)?.fields.keys() ?? []);
  const out: FieldChange[] = [];
  for (const field of schema.types.get(text(data.itemType))?.fields.keys() ?? []) {
    if (valid.has(field)) continue;
    const value = text(data[field]);
    if (value) out.push({ field, from: value, to: '' });
  }
  return out;
}
