/**
 * The Extra field, as Zotero's exporters read it.
 *
 * - {@link extraToCsl}: Zotero's CSL mapping (`Zotero.Utilities.Item.extraToCSL`) rewrites each
 *   `Label: value` line whose label is letters, spaces and hyphens into a CSL variable name:
 *   lower case, spaces to hyphens (`Original Date` → `original-date`), `doi` `isbn` `issn`
 *   `pmid` `pmcid` `url` upper-cased, `archive-location` → `archive_location`, and a Zotero field
 *   name written out (`Publication Title`, `Library Catalog`, `Citation Key`) → the CSL variable
 *   its field maps to. Other lines stay as they are. The result becomes the CSL `note`, which
 *   the CSL mapping then reads for variables (csl-json.ts).
 * - {@link parseExtraFields} / {@link citationKeyOf}: the reading of Zotero's BibTeX and
 *   BibLaTeX export translators: every line split at its first colon (after at least two
 *   characters); the citation key is the value of the first `Citation Key:` line (any case),
 *   else the item's `citationKey` field.
 */
import type { ItemSchema } from '../items/schema.js';
import type { WebApiItem, WebApiItemData } from '../local/sqlite/types.js';

/** CSL variables Zotero's `extraToCSL` keeps as written (lower case, spaces as hyphens). */
const CSL_NAMES_KEPT = new Set([
  'abstract',
  'accessed',
  'annote',
  'archive',
  'archive-place',
  'author',
  'authority',
  'call-number',
  'chapter-number',
  'citation-key',
  'citation-label',
  'citation-number',
  'collection-editor',
  'collection-number',
  'collection-title',
  'composer',
  'container',
  'container-author',
  'container-title',
  'container-title-short',
  'dimensions',
  'director',
  'edition',
  'editor',
  'editorial-director',
  'event',
  'event-date',
  'event-place',
  'first-reference-note-number',
  'genre',
  'illustrator',
  'interviewer',
  'issue',
  'issued',
  'jurisdiction',
  'keyword',
  'language',
  'locator',
  'medium',
  'note',
  'number',
  'number-of-pages',
  'number-of-volumes',
  'original-author',
  'original-date',
  'original-publisher',
  'original-publisher-place',
  'original-title',
  'page',
  'page-first',
  'publisher',
  'publisher-place',
  'recipient',
  'references',
  'reviewed-author',
  'reviewed-title',
  'scale',
  'section',
  'source',
  'status',
  'submitted',
  'title',
  'title-short',
  'translator',
  'type',
  'version',
  'volume',
  'year-suffix',
]);

/** CSL variables written in capitals. */
const CSL_NAMES_UPPER = new Set(['doi', 'isbn', 'issn', 'pmcid', 'pmid', 'url']);

const reverseCache = new WeakMap<ItemSchema['csl'], Map<string, string>>();

/**
 * Zotero field → the CSL variable it maps to (`CSL_FIELD_MAPPINGS_REVERSE`): text mappings in
 * order (a later variable wins for a field in two lists), then date mappings.
 */
export function cslVariableOfField(csl: ItemSchema['csl']): Map<string, string> {
  let map = reverseCache.get(csl);
  if (!map) {
    map = new Map();
    for (const [variable, fields] of Object.entries(csl.text)) {
      for (const field of fields) map.set(field, variable);
    }
    for (const [variable, field] of Object.entries(csl.date)) map.set(field, variable);
    reverseCache.set(csl, map);
  }
  return map;
}

/** The CSL variable name for one Extra label, as `extraToCSL` renames it (the label itself if none). */
export function cslNameOfLabel(label: string, csl: ItemSchema['csl']): string {
  const name = label.toLowerCase().replace(/ /g, '-');
  if (CSL_NAMES_KEPT.has(name)) return name;
  if (CSL_NAMES_UPPER.has(name)) return name.toUpperCase();
  if (name === 'archive-location') return 'archive_location';
  // A Zotero field written out: "Publication Title" → publicationTitle (the first space only,
  // as Zotero does), lower-casing the first letter unless the label starts with an acronym.
  let field = label.replace(/ ([A-Z])/, '$1');
  const second = field.charAt(1);
  if (second && second === second.toLowerCase()) field = field.charAt(0).toLowerCase() + field.slice(1);
  return cslVariableOfField(csl).get(field) ?? label;
}

/** Zotero's `extraToCSL`: every `Label: value` line (label of letters, spaces, hyphens) renamed. */
export function extraToCsl(extra: string, csl: ItemSchema['csl']): string {
  return extra.replace(/^([A-Za-z -]+)(:\s*.+)/gm, (_line, label: string, rest: string) => {
    return cslNameOfLabel(label, csl) + rest;
  });
}

/** One line of Extra as the BibTeX translators split it. */
export interface ExtraField {
  /** The line as written. */
  raw: string;
  /** Before the first colon, trimmed (lines whose colon comes before the third character have none). */
  field?: string;
  /** After the first colon, trimmed. */
  value?: string;
}

/** Extra as Zotero's BibTeX/BibLaTeX translators read it: one entry per line (a run of line breaks is one). */
export function parseExtraFields(extra: string): ExtraField[] {
  return extra.split(/[\r\n]+/).map((raw) => {
    const line = raw.trim();
    const colon = line.indexOf(':');
    if (colon <= 1) return { raw };
    return { raw, field: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() };
  });
}

/** The value of Extra's first `Citation Key:` line (any case) with a value. */
export function extraCitationKey(extra: string): string | undefined {
  return parseExtraFields(extra).find((f) => f.field?.toLowerCase() === 'citation key' && f.value)?.value;
}

/**
 * An item's citation key as Zotero's BibTeX export finds it: Extra's `Citation Key:` line
 * first, else the `citationKey` field (Zotero 8 keeps Better BibTeX's keys there). Undefined
 * when neither has one.
 */
export function citationKeyOf(item: WebApiItem | WebApiItemData): string | undefined {
  const data: WebApiItemData =
    'data' in item && typeof item.data === 'object' && item.data !== null
      ? (item as WebApiItem).data
      : (item as WebApiItemData);
  const extra = typeof data.extra === 'string' ? data.extra : '';
  const fromExtra = extra ? extraCitationKey(extra) : undefined;
  if (fromExtra) return fromExtra;
  const field = data.citationKey;
  return typeof field === 'string' && field.trim() !== '' ? field.trim() : undefined;
}
