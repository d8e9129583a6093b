/**
 * CSL-JSON → Zotero item JSON, driven by the CSL mappings of Zotero's own schema
 * (`csl.types`, `csl.fields`, `csl.names`), so every importer (Crossref, DataCite, CSL-JSON,
 * BibTeX and RIS files, which are all first read into CSL-JSON) lands on the same item types and
 * the type-specific field names (`container-title` is `bookTitle` for a book section,
 * `proceedingsTitle` for a conference paper).
 */
import { fieldFor, type ItemSchema } from './schema.js';
import { own } from '../own.js';

export interface CslName {
  family?: string;
  given?: string;
  literal?: string;
  /** Some sources (Crossref) use `name` for organisations. */
  name?: string;
}

export interface CslDate {
  'date-parts'?: Array<Array<number | string>>;
  raw?: string;
  literal?: string;
}

/** A CSL-JSON item: `type` plus variables (strings, numbers, names, dates). */
export type CslItem = Record<string, unknown> & { type?: string };

/** CSL variables that are not in the schema's text mapping but have an obvious Zotero field. */
const EXTRA_TEXT_ALIASES: Record<string, string[]> = {
  'container-title-short': ['journalAbbreviation'],
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A CSL variable as text: strings as is, numbers printed, the first of a list of strings. */
export function cslText(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) {
    const parts = value.map(cslText).filter((v): v is string => v !== undefined);
    return parts.length ? parts[0] : undefined;
  }
  return undefined;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** `{date-parts: [[2020, 5, 3]]}` → `2020-05-03`; raw and literal dates as given. */
export function cslDate(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'number') return cslText(value);
  if (!isObject(value)) return undefined;
  const d = value as CslDate;
  const parts = d['date-parts']?.[0];
  if (Array.isArray(parts) && parts.length > 0) {
    const [y, m, day] = parts.map((p) => Number(p));
    if (y !== undefined && Number.isFinite(y) && y > 0) {
      if (m !== undefined && Number.isFinite(m) && m >= 1 && m <= 12) {
        if (day !== undefined && Number.isFinite(day) && day >= 1 && day <= 31)
          return `${y}-${pad(m)}-${pad(day)}`;
        return `${y}-${pad(m)}`;
      }
      return String(y);
    }
  }
  return cslText(d.raw) ?? cslText(d.literal);
}

/** The Zotero item type for a CSL type, by the schema's mapping (`document` when unknown). */
export function itemTypeForCsl(schema: ItemSchema, cslType: string | undefined): string {
  const candidates = own(schema.csl.types, cslType) ?? [];
  const found = candidates.find((t) => schema.types.has(t));
  return found ?? (schema.types.has('document') ? 'document' : ([...schema.types.keys()][0] as string));
}

/** CSL name variable → Zotero creator types that map onto it (inverse of `csl.names`). */
function creatorTypesFor(schema: ItemSchema, cslName: string): string[] {
  return Object.entries(schema.csl.names)
    .filter(([, csl]) => csl === cslName)
    .map(([zotero]) => zotero);
}

/** CSL name variables found in the schema (author, editor, container-author, …). */
function nameVariables(schema: ItemSchema): string[] {
  return [...new Set(Object.values(schema.csl.names))];
}

export interface ZoteroCreator {
  creatorType: string;
  firstName?: string;
  lastName?: string;
  name?: string;
}

function toCreator(person: unknown, creatorType: string): ZoteroCreator | undefined {
  if (typeof person === 'string') {
    const text = person.trim();
    return text ? { creatorType, name: text } : undefined;
  }
  if (!isObject(person)) return undefined;
  const p = person as CslName;
  const family = typeof p.family === 'string' ? p.family.trim() : '';
  const given = typeof p.given === 'string' ? p.given.trim() : '';
  const literal = (
    typeof p.literal === 'string' ? p.literal : typeof p.name === 'string' ? p.name : ''
  ).trim();
  if (family) return { creatorType, firstName: given, lastName: family };
  if (literal) return { creatorType, name: literal };
  if (given) return { creatorType, name: given };
  return undefined;
}

export interface MapOptions {
  /** Forces the item type (arXiv records are preprints whatever their CSL type says). */
  itemType?: string;
  /** `libraryCatalog`: where the metadata came from (e.g. `DOI.org (Crossref)`). */
  libraryCatalog?: string;
  /** Tags to add (manual). */
  tags?: readonly string[];
  /** Lines to append to Extra. */
  extra?: readonly string[];
}

/**
 * A Zotero item (write JSON) from a CSL-JSON item. Only fields of the chosen type are set; a
 * DOI that the type has no field for goes to Extra as `DOI: …`, as Zotero does.
 */
export function cslToZotero(
  schema: ItemSchema,
  csl: CslItem,
  options: MapOptions = {},
): Record<string, unknown> {
  const itemType =
    options.itemType && schema.types.has(options.itemType)
      ? options.itemType
      : itemTypeForCsl(schema, typeof csl.type === 'string' ? csl.type : undefined);
  const item: Record<string, unknown> = { itemType };
  const extra: string[] = [];
  const set = (baseOrField: string, value: string | undefined): boolean => {
    if (value === undefined) return false;
    const field = fieldFor(schema, itemType, baseOrField);
    if (!field || item[field] !== undefined) return field !== undefined;
    item[field] = value;
    return true;
  };

  const textMap: Record<string, string[]> = { ...schema.csl.text, ...EXTRA_TEXT_ALIASES };
  for (const [variable, candidates] of Object.entries(textMap)) {
    const value = variable === 'title' ? cslText(csl.title) : cslText(csl[variable]);
    if (value === undefined) continue;
    if (variable === 'note') continue; // appended to Extra below
    const landed = candidates.some((c) => set(c, value));
    if (!landed && variable === 'DOI') extra.push(`DOI: ${value}`);
  }
  for (const [variable, base] of Object.entries(schema.csl.date)) {
    set(base, cslDate(csl[variable]));
  }

  const creators: ZoteroCreator[] = [];
  const spec = schema.types.get(itemType);
  const valid = spec?.creatorTypes ?? [];
  for (const variable of nameVariables(schema)) {
    const people = csl[variable];
    if (!Array.isArray(people) || people.length === 0) continue;
    let creatorType = creatorTypesFor(schema, variable).find((t) => valid.includes(t));
    if (!creatorType && variable === 'author') creatorType = spec?.primaryCreatorType;
    if (!creatorType && valid.includes('contributor')) creatorType = 'contributor';
    if (!creatorType) continue;
    for (const person of people) {
      const creator = toCreator(person, creatorType);
      if (creator) creators.push(creator);
    }
  }
  if (creators.length) item.creators = creators;

  const keywords = cslText(csl.keyword);
  const tags = [...(keywords ? keywords.split(/\s*[,;]\s*/).filter(Boolean) : []), ...(options.tags ?? [])];
  if (tags.length) item.tags = [...new Set(tags)].map((tag) => ({ tag }));

  if (options.libraryCatalog && item.libraryCatalog === undefined)
    set('libraryCatalog', options.libraryCatalog);
  const note = cslText(csl.note);
  if (note) extra.push(note);
  if (options.extra) extra.push(...options.extra);
  if (extra.length) {
    const current = typeof item.extra === 'string' ? [item.extra] : [];
    const field = fieldFor(schema, itemType, 'extra');
    if (field) item[field] = [...current, ...extra].join('\n');
  }
  return item;
}
