/**
 * An item as the index stores it, made from the item's Web API JSON, whatever the backend
 * read it (zotero.sqlite, the local API, the Web API): one code path for every source.
 *
 * What the columns hold mirrors the zotero.sqlite reader's in-memory table
 * (`local/sqlite/library-index.ts`), so an answer from the index equals one without it:
 * `tcy` is the folded title, creator names and year (`titleCreatorYear` matching), sort keys
 * are folded the same way, and `date_sql` orders like Zotero's stored dates.
 */
import { htmlToText } from '../items/html.js';
import { ANNOTATION_PROPS, ATTACHMENT_PROPS, COMMON_PROPS } from '../items/validate.js';
import { buildSchema, readBundledSchema, type ItemSchema } from '../items/schema.js';
import type { WebApiCreator, WebApiItem, WebApiTag } from '../local/sqlite/types.js';
import { fold } from '../local/sqlite/text.js';
import { creatorSummary } from '../local/sqlite/hydrate.js';
import type { TextColumn } from './store.js';

export interface IndexRecord {
  key: string;
  parent: string | null;
  itemType: string;
  ownDeleted: boolean;
  version: number;
  /** What the source says about this item's state: a changed signature means re-index it. */
  sig: string;
  dateAdded: string;
  dateModified: string;
  title: string;
  titleSort: string;
  creatorSort: string;
  /** Zotero's `meta.creatorSummary` (`Smith`, `Smith and Jones`, `Smith et al.`), '' without creators. */
  creatorSummary: string;
  dateSql: string;
  tcy: string;
  tags: WebApiTag[];
  collections: string[];
  text: Record<Exclude<TextColumn, 'fulltext'>, string>;
}

/**
 * Keys of `data` that are not searchable field values: the properties every item, attachment
 * or annotation has beside its schema fields (as item validation knows them), and what has a
 * column of its own. An attachment's file name stays: it is searched with the fields.
 */
const NOT_FIELDS = new Set<string>([
  ...COMMON_PROPS,
  ...ATTACHMENT_PROPS,
  ...ANNOTATION_PROPS,
  'title',
  'abstractNote',
  'note',
]);
NOT_FIELDS.delete('filename');

let schema: ItemSchema | undefined;
let titleFieldsByType: Map<string, string> | undefined;

/** The field that is, or stands for, `title` in a type (`caseName` for a case). */
function titleField(itemType: string): string {
  if (!titleFieldsByType) {
    schema ??= buildSchema(readBundledSchema(), 'bundled');
    titleFieldsByType = new Map();
    for (const [type, spec] of schema.types) titleFieldsByType.set(type, spec.byBase.get('title') ?? 'title');
  }
  return titleFieldsByType.get(itemType) ?? 'title';
}

function primaryCreatorType(itemType: string): string {
  schema ??= buildSchema(readBundledSchema(), 'bundled');
  return schema.types.get(itemType)?.primaryCreatorType ?? 'author';
}

function creatorName(c: WebApiCreator): string {
  return 'name' in c ? c.name : `${c.firstName} ${c.lastName}`;
}

function lastName(c: WebApiCreator): string {
  return 'name' in c ? c.name : c.lastName;
}

/** `2020-03-15`, `2020-03`, `2020` → `2020-03-15`, `2020-03-00`, `2020-00-00` (Zotero's SQL form). */
export function dateSqlOf(parsed: string | undefined): string {
  if (!parsed) return '';
  const [y, m, d] = parsed.split('-');
  if (!y) return '';
  return `${y.padStart(4, '0')}-${(m ?? '00').padStart(2, '0')}-${(d ?? '00').padStart(2, '0')}`;
}

/** A note's title as Zotero stores it (`itemNotes.title`): its first line, at most 120 characters. */
function noteTitle(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return line.trim().slice(0, 120);
}

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

export function toRecord(item: WebApiItem, sig: string): IndexRecord {
  const d = item.data;
  const itemType = d.itemType;
  const creators = d.creators ?? [];
  let title = str(d[titleField(itemType)]);
  let notes = '';
  let annotations = '';
  if (itemType === 'note') {
    notes = htmlToText(str(d.note));
    title = noteTitle(notes);
  } else if (itemType === 'annotation') {
    annotations = [str(d.annotationText), str(d.annotationComment)].filter(Boolean).join('\n');
  } else if (d.note) {
    // An attachment's own note.
    notes = htmlToText(str(d.note));
  }
  const primary = primaryCreatorType(itemType);
  const first =
    creators.find((c) => c.creatorType === primary) ??
    creators.find((c) => c.creatorType === 'editor') ??
    creators.find((c) => c.creatorType === 'contributor');
  const names = creators.map(creatorName).join(' ');
  const dateSql = dateSqlOf(item.meta.parsedDate);
  const year = dateSql.slice(0, 4);
  const fields: string[] = [];
  for (const [name, value] of Object.entries(d)) {
    if (NOT_FIELDS.has(name) || name === titleField(itemType)) continue;
    const s = str(value);
    if (s) fields.push(s);
  }
  const tags = d.tags ?? [];
  return {
    key: item.key,
    parent: d.parentItem ?? null,
    itemType,
    ownDeleted: Boolean(d.deleted),
    version: item.version,
    sig,
    dateAdded: d.dateAdded,
    dateModified: d.dateModified,
    title,
    titleSort: fold(title),
    creatorSort: first ? fold(lastName(first)) : '',
    creatorSummary: str(item.meta.creatorSummary) || creatorSummary(primary, creators),
    dateSql,
    tcy: fold(`${title} ${names} ${year === '0000' ? '' : year}`),
    tags,
    collections: d.collections ?? [],
    text: {
      title,
      creators: names,
      abstract: str(d.abstractNote),
      tags: tags.map((t) => t.tag).join('\n'),
      notes,
      annotations,
      fields: fields.join('\n'),
    },
  };
}
