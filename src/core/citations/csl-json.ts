/**
 * Zotero item (Web API JSON, the shape every backend answers in) → CSL-JSON, as Zotero's own
 * `itemToCSLJSON` maps it, from the `csl` section of the item schema:
 *
 * - `type`: the CSL type listing the item type (`preprint` → `article`); a type the schema does
 *   not know becomes `document`. Annotations have none (an error).
 * - text variables: for each variable of `csl.fields.text`, the first of its fields that the
 *   item has non-empty (a base field through the type's own field: `publicationTitle` is a
 *   book section's `bookTitle`); `shortTitle` is written as `title-short` only; an ISBN
 *   field gives its first ISBN; a value in double quotes loses them; Extra becomes `note`
 *   with its `Label: value` lines renamed to CSL variables (extra.ts). Audio and video
 *   recordings and presentations also give their Place as `event-place`.
 * - names: each creator under the CSL name variable of its creator type; an unmapped type only
 *   when it is the item type's primary one, as `author`. A single-field name is `{literal}`;
 *   a two-field name `{family, given}`, with particles split off (`van` → non-dropping,
 *   trailing `de` of a given name → dropping, `, Jr.` → suffix) unless the family name is in
 *   double quotes (which are dropped).
 * - dates: `csl.fields.date` (date → issued, accessDate → accessed in local time,
 *   filingDate → submitted, originalDate → original-date) read by dates.ts.
 * - then the variables of the note, as citeproc-js reads them (its "field hack", which
 *   Zotero's citations rely on): `var: value` lines (or `{:var:value}`) from the top of the
 *   note to the first other line (a first line of free text is passed over). `type:` sets the
 *   type, a date variable replaces the item's date, a name variable adds names (`Family ||
 *   Given`, or a literal) when the item has none of that role, any other CSL variable is set
 *   when the item lacks it; `citation-key` replaces the field's key, as Zotero's exporters
 *   prefer Extra's. Lines read are removed from the note; lines naming something that is not a
 *   CSL 1.0.2 variable, a role the item already has, or a variable it already has stay. The
 *   result needs no field hack: every CSL processor reads the same item.
 * - `id`: the item's URI, `http://zotero.org/users/<id>/items/<KEY>` (`groups/<id>` for a
 *   group), unless the caller gives one (the CSL-JSON export gives the citation key).
 */
import { fieldFor, type ItemSchema } from '../items/schema.js';
import type { WebApiCreator, WebApiItem } from '../local/sqlite/types.js';
import type { CslDate, CslItem, CslName } from './csl-types.js';
import { accessDateToCsl, dateToCsl, type DateOptions } from './dates.js';
import { extraToCsl } from './extra.js';

export interface CslJsonOptions extends DateOptions {
  /** The CSL `id` (default: the item's URI, {@link itemUri}). */
  id?: string;
}

/** A name as Zotero's particle parsing leaves it (citeproc-js's own two extra flags included). */
export type ParsedCslName = CslName & { 'comma-suffix'?: boolean; 'comma-dropping-particle'?: string };

/** Zotero's URI of an item: `http://zotero.org/users/<id>/items/<KEY>`, `groups/<id>` for a group. */
export function itemUri(item: Pick<WebApiItem, 'key' | 'library'>): string {
  const scope = item.library.type === 'group' ? 'groups' : 'users';
  return `http://zotero.org/${scope}/${item.library.id}/items/${item.key}`;
}

/** The item types whose Place Zotero also cites as the event's place (they have no Event Place field). */
const PLACE_IS_EVENT_PLACE = new Set(['audioRecording', 'presentation', 'videoRecording']);

/** The CSL 1.0.2 variables by kind (csl-data.json), for what the note may set. */
const CSL_DATE_VARIABLES = new Set([
  'accessed',
  'available-date',
  'event-date',
  'issued',
  'original-date',
  'submitted',
]);
const CSL_NAME_VARIABLES = new Set([
  'author',
  'chair',
  'collection-editor',
  'compiler',
  'composer',
  'container-author',
  'contributor',
  'curator',
  'director',
  'editor',
  'editorial-director',
  'executive-producer',
  'guest',
  'host',
  'interviewer',
  'illustrator',
  'narrator',
  'organizer',
  'original-author',
  'performer',
  'producer',
  'recipient',
  'reviewed-author',
  'script-writer',
  'series-creator',
  'translator',
]);
const CSL_TEXT_VARIABLES = new Set([
  'citation-key',
  'language',
  'journalAbbreviation',
  'shortTitle',
  'abstract',
  'annote',
  'archive',
  'archive_collection',
  'archive_location',
  'archive-place',
  'authority',
  'call-number',
  'chapter-number',
  'citation-number',
  'citation-label',
  'collection-number',
  'collection-title',
  'container-title',
  'container-title-short',
  'dimensions',
  'division',
  'DOI',
  'edition',
  'event',
  'event-title',
  'event-place',
  'first-reference-note-number',
  'genre',
  'ISBN',
  'ISSN',
  'issue',
  'jurisdiction',
  'keyword',
  'locator',
  'medium',
  'number',
  'number-of-pages',
  'number-of-volumes',
  'original-publisher',
  'original-publisher-place',
  'original-title',
  'page',
  'page-first',
  'part',
  'part-title',
  'PMCID',
  'PMID',
  'printing',
  'publisher',
  'publisher-place',
  'references',
  'reviewed-genre',
  'reviewed-title',
  'scale',
  'section',
  'source',
  'status',
  'supplement',
  'title',
  'title-short',
  'URL',
  'version',
  'volume',
  'volume-title',
  'volume-title-short',
  'year-suffix',
]);
/** The CSL 1.0.2 item types. */
export const CSL_TYPES: ReadonlySet<string> = new Set([
  'article',
  'article-journal',
  'article-magazine',
  'article-newspaper',
  'bill',
  'book',
  'broadcast',
  'chapter',
  'classic',
  'collection',
  'dataset',
  'document',
  'entry',
  'entry-dictionary',
  'entry-encyclopedia',
  'event',
  'figure',
  'graphic',
  'hearing',
  'interview',
  'legal_case',
  'legislation',
  'manuscript',
  'map',
  'motion_picture',
  'musical_score',
  'pamphlet',
  'paper-conference',
  'patent',
  'performance',
  'periodical',
  'personal_communication',
  'post',
  'post-weblog',
  'regulation',
  'report',
  'review',
  'review-book',
  'software',
  'song',
  'speech',
  'standard',
  'thesis',
  'treaty',
  'webpage',
]);

const typeCache = new WeakMap<ItemSchema['csl'], Map<string, string>>();

/** Zotero item type → CSL type (`CSL_TYPE_MAPPINGS`). */
export function cslTypeOf(itemType: string, csl: ItemSchema['csl']): string | undefined {
  let map = typeCache.get(csl);
  if (!map) {
    map = new Map();
    for (const [cslType, zoteroTypes] of Object.entries(csl.types)) {
      for (const t of zoteroTypes) if (!map.has(t)) map.set(t, cslType);
    }
    typeCache.set(csl, map);
  }
  return map.get(itemType);
}

/** The first ISBN of an ISBN field (`978-3-16-148410-0 0-306-40615-2` → the first). */
const FIRST_ISBN = /^(?:97[89]-?)?(?:\d-?){9}[\dx](?!-)\b/i;

/** A value wholly in double quotes loses them (`"Dr" Foo`, with a quote inside, does not). */
function unquoted(value: string): string {
  return value.startsWith('"') && value.indexOf('"', 1) === value.length - 1 ? value.slice(1, -1) : value;
}

/** `abc` → `cba`, code unit by code unit (the particle patterns read given names backwards). */
function reversed(s: string): string {
  return s.split('').reverse().join('');
}

/** Leading particles of a family name: a lower-case word ended by a space, hyphen or apostrophe. */
const FAMILY_PARTICLE = /^([^ ]+(?:-|\u02bb|\u2019| |') *)(.+)$/;
/** Trailing particles of a given name, read on the reversed name. */
const GIVEN_PARTICLE = /^([^ ]+(?:\u02bb |\u2019 | |' ) *)(.+)$/;

/** Whether a matched word is a particle: its first letter (after hyphens, apostrophes, spaces) is lower case. */
function isParticle(word: string): boolean {
  const letter = word.replace(/^[-'\u02bb\u2019\s]*/, '').charAt(0);
  return letter !== '' && letter.toUpperCase() !== letter;
}

/** Trim, but keep one space after a final apostrophe (`d' ` stays joined to the name by a space). */
function trimParticle(s: string): string {
  const trimmed = s.trim();
  return s.endsWith(' ') && (trimmed.endsWith("'") || trimmed.endsWith('\u2019')) ? `${trimmed} ` : trimmed;
}

function leadingParticles(family: string): { particle: string; rest: string } {
  let rest = family;
  let particle = '';
  for (let m = FAMILY_PARTICLE.exec(rest); m && isParticle(m[1] as string); m = FAMILY_PARTICLE.exec(rest)) {
    particle += m[1] as string;
    rest = m[2] as string;
  }
  return { particle: trimParticle(particle), rest };
}

function trailingParticles(given: string): { particle: string; rest: string } {
  let back = reversed(given);
  const found: string[] = [];
  for (let m = GIVEN_PARTICLE.exec(back); m; m = GIVEN_PARTICLE.exec(back)) {
    const word = reversed(m[1] as string);
    if (!isParticle(word)) break;
    found.unshift(word);
    back = m[2] as string;
  }
  // Each word was read with the space before it: move that space to the end of the previous one.
  for (let i = 1; i < found.length; i++) if ((found[i] as string).startsWith(' ')) found[i - 1] += ' ';
  const words = found.map((w) => (w.startsWith(' ') ? w.slice(1) : w));
  return { particle: words.join('').trim(), rest: reversed(back) };
}

/**
 * Name particles and suffix, as Zotero (after citeproc-js) splits them: leading lower-case
 * words of the family name (`van der`, `d'`, `al-`) are the non-dropping particle; a suffix
 * after the given name's first comma (`John, Jr.`; `,!` marks a comma kept before it) goes to
 * `suffix` (or "et al." to the dropping particle); trailing lower-case words of the given name
 * (`Ludwig van`) are the dropping particle.
 */
export function parseParticles(name: ParsedCslName): ParsedCslName {
  if (name.family !== undefined) {
    const { particle, rest } = leadingParticles(name.family);
    name.family = rest;
    if (particle) name['non-dropping-particle'] = particle;
  }
  if (!name.suffix && name.given) {
    const m = /(\s*,!*\s*)/.exec(name.given);
    if (m) {
      const at = m.index;
      const suffix = name.given.slice(at + (m[1] as string).length);
      const comma = (m[1] as string).replace(/\s*/g, '');
      if (suffix.replace(/\./g, '') === 'et al' && !name['dropping-particle']) {
        name['dropping-particle'] = suffix;
        name['comma-dropping-particle'] = ',';
      } else {
        if (comma.length === 2) name['comma-suffix'] = true;
        name.suffix = suffix;
      }
      name.given = name.given.slice(0, at);
    }
  }
  if (name.given !== undefined) {
    const { particle, rest } = trailingParticles(name.given);
    name.given = rest;
    if (particle) name['dropping-particle'] = particle;
  }
  return name;
}

/** One creator as a CSL name (undefined for an empty one). */
export function cslName(creator: WebApiCreator & { fieldMode?: number }): ParsedCslName | undefined {
  const c = creator as { name?: string; firstName?: string; lastName?: string; fieldMode?: number };
  if (c.name || (c.fieldMode === 1 && c.lastName && !c.firstName))
    return { literal: (c.name || c.lastName) as string };
  if (!c.lastName && !c.firstName) return undefined;
  const name: ParsedCslName = { family: c.lastName || '', given: c.firstName || '' };
  if (name.family && name.given) {
    const family = name.family;
    if (family.length > 1 && family.startsWith('"') && family.endsWith('"'))
      name.family = family.slice(1, -1);
    else parseParticles(name);
  }
  return name;
}

/** A short title for a note: its first line of text, at most 120 characters. */
function noteTitle(html: string): string {
  const text = html
    .trim()
    .replace(/(<\/(?:h\d|p|div)+>)/g, '$1\n')
    .replace(/<br\s*\/?>/g, ' ')
    .replace(/<[^>]*>/g, '')
    .replace(/&nbsp;/g, '\u00a0')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .trim();
  const first = text.slice(0, 120);
  const nl = first.indexOf('\n');
  return nl > -1 ? first.slice(0, nl) : first;
}

/**
 * A Zotero item as CSL-JSON (see the module comment). The same item gives the same JSON
 * whichever backend read it: only the Web API shape is read.
 */
export function toCslJson(item: WebApiItem, schema: ItemSchema, options: CslJsonOptions = {}): CslItem {
  const data = item.data;
  const itemType = data.itemType;
  if (itemType === 'annotation') throw new Error('An annotation has no CSL form: cite its parent item.');
  const spec = schema.types.get(itemType);
  const csl: CslItem = {
    id: options.id ?? itemUri(item),
    type: cslTypeOf(itemType, schema.csl) ?? 'document',
  };
  /** The item's value for a field named in the mappings (a base field through the type's own). */
  const valueOf = (field: string): unknown => {
    const own = spec ? fieldFor(schema, itemType, field) : field;
    return own === undefined ? undefined : data[own];
  };

  for (const [variable, fields] of Object.entries(schema.csl.text)) {
    if (variable === 'shortTitle') continue; // written as title-short only
    for (const field of fields) {
      let value = valueOf(field);
      if (typeof value !== 'string' || value === '') continue;
      if (field === 'ISBN') value = FIRST_ISBN.exec(value)?.[0] ?? value;
      else if (field === 'extra') value = extraToCsl(value as string, schema.csl);
      value = unquoted(value as string);
      if (value !== '') csl[variable] = value as string;
      break;
    }
  }
  if (PLACE_IS_EVENT_PLACE.has(itemType) && csl['event-place'] === undefined) {
    const place = valueOf('place');
    if (typeof place === 'string' && place !== '') csl['event-place'] = unquoted(place);
  }

  for (const creator of data.creators ?? []) {
    const variable =
      schema.csl.names[creator.creatorType] ??
      (creator.creatorType === spec?.primaryCreatorType ? 'author' : undefined);
    if (!variable) continue;
    const name = cslName(creator);
    if (!name) continue;
    const list = csl[variable];
    if (Array.isArray(list)) list.push(name);
    else csl[variable] = [name];
  }

  for (const [variable, field] of Object.entries(schema.csl.date)) {
    const value = valueOf(field);
    if (typeof value !== 'string' || value === '') continue;
    const date = field === 'accessDate' ? accessDateToCsl(value, options) : dateToCsl(value, options);
    if (date) csl[variable] = date;
  }

  if (itemType === 'note' && typeof data.note === 'string' && data.note) csl.title = noteTitle(data.note);

  readNoteVariables(csl, schema, options);
  return csl;
}

/** A CSL `var: value` line: the variable in lower case (with `-` `_`) or in capitals. */
const NOTE_FIELD = /^([-_a-z]+|[A-Z]+):\s*([^}]+)$/;
/** The legacy `{:var:value}` form, anywhere in a line. */
const NOTE_FIELDS_LEGACY = /\{:(?:[-_a-z]+|[A-Z]+):[^}]+\}/g;

/** Legacy `{:var:value}` entries as lines of their own, unless text that is not a field comes before one. */
function splitLegacyFields(lines: string[]): string[] {
  return lines
    .map((line, i) => {
      const found = line.match(NOTE_FIELDS_LEGACY);
      if (!found) return line;
      const between = line.split(NOTE_FIELDS_LEGACY);
      let out = '';
      let converting = true;
      for (let j = 0; j < found.length; j++) {
        const before = between[j] as string;
        out += before;
        if (converting && before.trim() && (i > 0 || j > 0) && !NOTE_FIELD.test(before)) converting = false;
        const entry = found[j] as string;
        out += converting ? `\n${entry.slice(2, -1).trim()}\n` : entry;
      }
      return out + (between[found.length] as string);
    })
    .join('\n')
    .split('\n');
}

/**
 * Applies the CSL variables of `csl.note` to the item, as citeproc-js's field hack reads them
 * (see the module comment), and removes the lines it applied. An empty note is dropped.
 */
export function readNoteVariables(csl: CslItem, schema: ItemSchema, options: DateOptions = {}): void {
  if (typeof csl.note !== 'string' || csl.note === '') return;
  const lines = splitLegacyFields(csl.note.split('\n'));
  const names = new Map<string, ParsedCslName[]>();
  let keyFromNote = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (!line.trim()) continue;
    const m = NOTE_FIELD.exec(line);
    if (!m) {
      if (i === 0) continue;
      break;
    }
    const key = m[1] as string;
    const value = (m[2] as string).trim();
    if (value === '') continue;
    if (key === 'type') {
      const type = CSL_TYPES.has(value) ? value : cslTypeOf(value, schema.csl);
      if (!type) continue;
      csl.type = type;
    } else if (CSL_DATE_VARIABLES.has(key)) {
      const date: CslDate | undefined = dateToCsl(value, options);
      if (!date) continue;
      csl[key] = date;
    } else if (CSL_NAME_VARIABLES.has(key)) {
      if (csl[key] !== undefined) continue;
      const parts = value.split(/\s*\|\|\s*/);
      const list = names.get(key) ?? [];
      names.set(key, list);
      if (parts.length === 1) list.push({ literal: parts[0] as string });
      else if (parts.length === 2) list.push(parseParticles({ family: parts[0], given: parts[1] }));
    } else if (key === 'citation-key') {
      if (keyFromNote) continue;
      keyFromNote = true;
      csl[key] = value;
    } else if (CSL_TEXT_VARIABLES.has(key) || Object.hasOwn(schema.csl.text, key)) {
      if (key === 'note' || csl[key] !== undefined) continue;
      csl[key] = value;
    } else {
      continue;
    }
    lines[i] = '';
  }
  for (const [key, list] of names) if (list.length) csl[key] = list;
  const note = lines.join('\n').trim();
  if (note) csl.note = note;
  else delete csl.note;
}
