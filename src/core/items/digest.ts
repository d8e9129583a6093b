/**
 * Compact digests of items for an agent (`zotero_summarize`) and the one-line citation and
 * result lines the read tools print. Pure functions over items in the Web API's JSON shape, so
 * every backend gives the same digest.
 */
import type { WebApiCreator, WebApiItem } from '../local/sqlite/types.js';
import { byCodeUnit } from '../text-order.js';
import { htmlToText, noteTitle } from './html.js';

/** Characters of an abstract a digest keeps (cut at a word boundary, then `…`). */
export const ABSTRACT_EXCERPT = 400;
/** Characters of a note's text a digest keeps. */
export const NOTE_EXCERPT = 200;
/** Entries of each list of a digest (notes, attachments, tags, collections); `omitted` counts the rest. */
export const DIGEST_LIST_MAX = 20;

export interface DigestNote {
  key: string;
  /** The note's first line. */
  title: string;
  /** The start of its plain text. */
  excerpt: string;
}

export interface DigestAttachment {
  key: string;
  title: string;
  contentType: string | null;
  filename: string | null;
  /** `imported_file`, `imported_url`, `linked_file`, `linked_url`, `embedded_image`. */
  linkMode: string | null;
  /** Whether the attachment holds text Zotero can read (a stored or linked PDF, EPUB or web page). */
  fulltext: boolean;
}

export interface Digest {
  key: string;
  itemType: string;
  /** One reference line: creators (year). Title. Container, volume(issue), pages. DOI. */
  citation: string;
  title: string;
  /** `Last, First`; non-primary roles follow in parentheses: `Hofstadter, Douglas (editor)`. */
  creators: string[];
  /** Four digits, or null when the item has no parseable date. */
  year: string | null;
  /** The abstract's first ABSTRACT_EXCERPT characters, cut at a word; absent when there is none. */
  abstract?: string;
  /** True when `abstract` was cut. */
  abstractTruncated?: boolean;
  DOI?: string;
  url?: string;
  tags: string[];
  collections: Array<{ key: string; name: string }>;
  /** Child notes, oldest first. */
  notes: DigestNote[];
  attachments: DigestAttachment[];
  /** Whether any attachment of the item (or the item itself, when it is one) holds readable full text. */
  fulltext: boolean;
  /** In the trash. */
  inTrash?: true;
  /** Entries left out of a list longer than DIGEST_LIST_MAX, by list; absent when nothing was. */
  omitted?: Partial<Record<'notes' | 'attachments' | 'tags' | 'collections', number>>;
}

const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');

/** `John A.` → `J. A.`; `Anna-Lena` → `A.-L.`. */
export function initials(given: string): string {
  return given
    .split(/\s+/)
    .filter(Boolean)
    .map((part) =>
      part
        .split('-')
        .filter(Boolean)
        .map((p) => `${[...p][0]!.toUpperCase()}.`)
        .join('-'),
    )
    .join(' ');
}

function fullName(c: WebApiCreator): string {
  if ('name' in c) return str(c.name);
  const last = str(c.lastName);
  const first = str(c.firstName);
  return first && last ? `${last}, ${first}` : last || first;
}

function shortName(c: WebApiCreator): string {
  if ('name' in c) return str(c.name);
  const last = str(c.lastName);
  const first = str(c.firstName);
  return first && last ? `${last}, ${initials(first)}` : last || first;
}

/** Creators who count as the item's authors: `author` (or the first role present, e.g. `editor`). */
function primaryCreators(creators: readonly WebApiCreator[]): { list: WebApiCreator[]; role: string } {
  const role = creators.some((c) => c.creatorType === 'author')
    ? 'author'
    : (creators[0]?.creatorType ?? 'author');
  return { list: creators.filter((c) => c.creatorType === role), role };
}

/** `Last, First` per creator, with the role when it is not the item's primary one. */
export function creatorList(item: WebApiItem): string[] {
  const creators = Array.isArray(item.data.creators) ? item.data.creators : [];
  const { role } = primaryCreators(creators);
  return creators
    .map((c) => {
      const name = fullName(c);
      if (!name) return '';
      return c.creatorType === role ? name : `${name} (${c.creatorType})`;
    })
    .filter(Boolean);
}

/** `Church, J. A., & White, N. J.`; more than three: `Vaswani, A., et al.`. */
export function authorLine(item: WebApiItem): string {
  const creators = Array.isArray(item.data.creators) ? item.data.creators : [];
  const { list, role } = primaryCreators(creators);
  const names = list.map(shortName).filter(Boolean);
  if (names.length === 0) return '';
  let line: string;
  if (names.length === 1) line = names[0]!;
  else if (names.length <= 3) line = `${names.slice(0, -1).join(', ')}, & ${names[names.length - 1]}`;
  else line = `${names[0]}, et al.`;
  if (role === 'editor') line += names.length === 1 ? ' (Ed.)' : ' (Eds.)';
  return line;
}

/** The year of the item: `meta.parsedDate`, else the first four-digit run of `data.date`. */
export function itemYear(item: WebApiItem): string | null {
  const parsed = str(item.meta?.parsedDate);
  if (/^\d{4}/.test(parsed)) return parsed.slice(0, 4);
  const m = /\b(\d{4})\b/.exec(str(item.data.date));
  return m ? m[1]! : null;
}

/** The item's title; a note's first line; an attachment's title or file name. */
export function itemTitle(item: WebApiItem): string {
  const d = item.data;
  const title = str(d.title) || str(d.caseName) || str(d.nameOfAct) || str(d.subject);
  if (title) return title;
  if (d.itemType === 'note') return noteTitle(htmlToText(str(d.note)));
  if (d.itemType === 'annotation') return str(d.annotationText) || str(d.annotationComment);
  return str(d.filename);
}

/** Where the item appeared: journal, book, proceedings, site, university, publisher… */
function container(item: WebApiItem): string {
  const d = item.data;
  if (d.itemType === 'book') return str(d.publisher);
  for (const field of [
    'publicationTitle',
    'bookTitle',
    'proceedingsTitle',
    'encyclopediaTitle',
    'dictionaryTitle',
    'websiteTitle',
    'blogTitle',
    'forumTitle',
    'programTitle',
    'seriesTitle',
  ]) {
    const v = str(d[field]);
    if (v) return v;
  }
  if (d.itemType === 'thesis') {
    const kind = str(d.thesisType) || 'Thesis';
    const where = str(d.university);
    return `[${where ? `${kind}, ${where}` : kind}]`;
  }
  if (d.itemType === 'report') return [str(d.institution), str(d.reportNumber)].filter(Boolean).join(', ');
  return str(d.publisher);
}

const endsWithStop = (s: string): boolean => /[.!?]$/.test(s);
const sentence = (s: string): string => (endsWithStop(s) ? s : `${s}.`);

/**
 * One reference line, APA-like and compact: `Church, J. A., & White, N. J. (2011). Sea-level rise
 * … century. Surveys in Geophysics, 32(4-5), 585-602. https://doi.org/10.1007/…`.
 */
export function citationLine(item: WebApiItem): string {
  const d = item.data;
  const title = itemTitle(item);
  if (d.itemType === 'note' || d.itemType === 'attachment' || d.itemType === 'annotation') {
    return title ? `${title} [${d.itemType}]` : `[${d.itemType}]`;
  }
  const parts: string[] = [];
  const authors = authorLine(item);
  const year = itemYear(item) ?? 'n.d.';
  parts.push(authors ? `${authors} (${year}).` : `(${year}).`);
  if (title) parts.push(sentence(title));
  let where = container(item);
  const volume = str(d.volume);
  const issue = str(d.issue);
  const pages = str(d.pages);
  if (volume) where += `${where ? ', ' : ''}${volume}${issue ? `(${issue})` : ''}`;
  else if (issue) where += `${where ? ', ' : ''}(${issue})`;
  if (pages) where += `${where ? ', ' : ''}${pages}`;
  // A book section's publisher follows its book and pages.
  if (d.itemType === 'bookSection' && str(d.publisher)) where += `${where ? '. ' : ''}${str(d.publisher)}`;
  if (where) parts.push(sentence(where));
  const doi = str(d.DOI);
  if (doi) parts.push(`https://doi.org/${doi.replace(/^https?:\/\/(dx\.)?doi\.org\//i, '')}`);
  else if (str(d.url) && (d.itemType === 'webpage' || d.itemType === 'blogPost')) parts.push(str(d.url));
  return parts.join(' ');
}

/** The first `max` characters of `text`, cut at a word boundary, with `…` when cut. */
export function excerpt(text: string, max: number): { text: string; truncated: boolean } {
  const clean = text.replace(/\s+/g, ' ').trim();
  if (clean.length <= max) return { text: clean, truncated: false };
  const cut = clean.slice(0, max);
  const space = cut.lastIndexOf(' ');
  const head = (space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.-]+$/, '');
  return { text: `${head}…`, truncated: true };
}

const FULLTEXT_TYPES = new Set([
  'application/pdf',
  'application/epub+zip',
  'text/html',
  'application/xhtml+xml',
  'text/plain',
]);

/** Whether an attachment holds a file Zotero indexes (a link to a URL holds none). */
export function attachmentHasText(item: WebApiItem): boolean {
  const d = item.data;
  if (d.itemType !== 'attachment') return false;
  if (str(d.linkMode) === 'linked_url') return false;
  return FULLTEXT_TYPES.has(str(d.contentType).toLowerCase());
}

export function tagNames(item: WebApiItem): string[] {
  return Array.isArray(item.data.tags) ? item.data.tags.map((t) => t.tag) : [];
}

export function noteOf(item: WebApiItem): DigestNote {
  const text = htmlToText(str(item.data.note));
  return { key: item.key, title: noteTitle(text), excerpt: excerpt(text, NOTE_EXCERPT).text };
}

export function attachmentOf(item: WebApiItem, fulltext?: boolean): DigestAttachment {
  const d = item.data;
  const orNull = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  return {
    key: item.key,
    title: str(d.title) || str(d.filename),
    contentType: orNull(d.contentType),
    filename: orNull(d.filename),
    linkMode: orNull(d.linkMode),
    fulltext: fulltext ?? attachmentHasText(item),
  };
}

/**
 * The digest of one item from its JSON, its direct children and the names of the library's
 * collections. `fulltextKeys`, when given, are the attachments known to hold indexed text;
 * without it an attachment counts when it is a stored or linked PDF, EPUB, HTML or text file.
 */
export function digestOf(
  item: WebApiItem,
  children: readonly WebApiItem[],
  collectionNames: ReadonlyMap<string, string>,
  fulltextKeys?: ReadonlySet<string>,
): Digest {
  const d = item.data;
  const hasText = (i: WebApiItem) => (fulltextKeys ? fulltextKeys.has(i.key) : attachmentHasText(i));
  const notes = children
    .filter((c) => c.data.itemType === 'note')
    .sort((a, b) => byCodeUnit(str(a.data.dateAdded), str(b.data.dateAdded)) || byCodeUnit(a.key, b.key))
    .map(noteOf);
  const attachments = children
    .filter((c) => c.data.itemType === 'attachment')
    .map((c) => attachmentOf(c, hasText(c)));
  const digest: Digest = {
    key: item.key,
    itemType: d.itemType,
    citation: citationLine(item),
    title: itemTitle(item),
    creators: creatorList(item),
    year: itemYear(item),
    tags: tagNames(item),
    collections: (Array.isArray(d.collections) ? d.collections : []).map((key) => ({
      key,
      name: collectionNames.get(key) ?? '',
    })),
    notes,
    attachments,
    fulltext: attachments.some((a) => a.fulltext) || (d.itemType === 'attachment' && hasText(item)),
  };
  const abstract = str(d.abstractNote);
  if (abstract) {
    const cut = excerpt(abstract, ABSTRACT_EXCERPT);
    digest.abstract = cut.text;
    if (cut.truncated) digest.abstractTruncated = true;
  }
  if (d.itemType === 'note' && !abstract) {
    const text = htmlToText(str(d.note));
    if (text) digest.abstract = excerpt(text, ABSTRACT_EXCERPT).text;
  }
  if (str(d.DOI)) digest.DOI = str(d.DOI);
  if (str(d.url)) digest.url = str(d.url);
  if (d.deleted) digest.inTrash = true;
  // Compact means bounded: an item with hundreds of notes or tags keeps the first ones.
  // (fulltext above was judged from every attachment.)
  const cap = <T>(list: T[], name: keyof NonNullable<Digest['omitted']>): T[] => {
    if (list.length <= DIGEST_LIST_MAX) return list;
    (digest.omitted ??= {})[name] = list.length - DIGEST_LIST_MAX;
    return list.slice(0, DIGEST_LIST_MAX);
  };
  digest.notes = cap(digest.notes, 'notes');
  digest.attachments = cap(digest.attachments, 'attachments');
  digest.tags = cap(digest.tags, 'tags');
  digest.collections = cap(digest.collections, 'collections');
  return digest;
}

/** A digest as a few lines of text (CLI table mode, MCP content). */
export function digestText(digest: Digest): string {
  const lines = [`${digest.key}  ${digest.citation}`];
  const facts = [digest.itemType, digest.year ?? 'no date'];
  if (digest.inTrash) facts.push('IN TRASH');
  lines.push(`  ${facts.join(' · ')}`);
  if (digest.creators.length) lines.push(`  Creators: ${digest.creators.join('; ')}`);
  if (digest.abstract)
    lines.push(`  ${digest.itemType === 'note' ? 'Text' : 'Abstract'}: ${digest.abstract}`);
  if (digest.tags.length) lines.push(`  Tags: ${digest.tags.join(', ')}`);
  if (digest.collections.length)
    lines.push(`  Collections: ${digest.collections.map((c) => c.name || c.key).join(', ')}`);
  for (const n of digest.notes) lines.push(`  Note ${n.key}: ${n.excerpt || n.title || '(empty)'}`);
  for (const a of digest.attachments) {
    const kind = a.contentType ?? a.linkMode ?? 'attachment';
    lines.push(`  Attachment ${a.key}: ${a.title || a.filename || '(untitled)'} (${kind})`);
  }
  lines.push(`  Full text: ${digest.fulltext ? 'yes' : 'no'}`);
  const omitted = Object.entries(digest.omitted ?? {}).map(([list, n]) => `${n} more ${list}`);
  if (omitted.length) lines.push(`  Not shown: ${omitted.join(', ')}`);
  return lines.join('\n');
}

/** One line per item for result lists: `KEY  type  year  creators — title`. */
export function resultLine(item: WebApiItem): string {
  const d = item.data;
  const creators = str(item.meta?.creatorSummary) || authorLine(item);
  const year = itemYear(item) ?? '----';
  const trash = d.deleted ? ' [trash]' : '';
  const head = creators ? `${creators} — ` : '';
  return `${item.key}  ${d.itemType.padEnd(16)}  ${year}  ${head}${itemTitle(item) || '(untitled)'}${trash}`;
}
