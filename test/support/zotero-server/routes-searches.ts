/**
 * Running a saved search, as the desktop's local API does at `searches/{key}/items` (the Web
 * API stores saved searches but has no such route): the items matching the search's conditions
 * in Zotero's sense (all of them, or any with `joinMode any`; text compared without case;
 * items in the trash left out unless `deleted true`; child items included, unless
 * `noChildren true`). A condition this server cannot evaluate answers `501`, so a test never
 * gets a silently wrong answer.
 */
import { HttpError } from './http.js';
import type { CollectionData, ItemData, SearchData } from './types.js';

type Condition = SearchData['conditions'][number];
type Test = (item: ItemData) => boolean;

interface Scope {
  items: Map<string, ItemData>;
  collections: Map<string, CollectionData>;
}

/** Conditions that steer the search rather than test an item. */
const STEERING = new Set([
  'joinMode',
  'deleted',
  'noChildren',
  'recursive',
  'includeParentsAndChildren',
  'includeParents',
  'includeChildren',
]);

const lower = (v: unknown): string => (typeof v === 'string' ? v.toLowerCase() : '');

/** One operator over the values an item has for a condition (several for tags and creators). */
function compare(operator: string, wanted: string, values: readonly string[]): boolean {
  const w = wanted.toLowerCase();
  const vs = values.map((v) => v.toLowerCase());
  switch (operator) {
    case 'is':
      return vs.includes(w);
    case 'isNot':
      return !vs.includes(w);
    case 'contains':
      return vs.some((v) => v.includes(w));
    case 'doesNotContain':
      return !vs.some((v) => v.includes(w));
    case 'beginsWith':
      return vs.some((v) => v.startsWith(w));
    case 'isBefore':
      return vs.some((v) => v !== '' && v < w);
    case 'isAfter':
      return vs.some((v) => v !== '' && v > w);
    default:
      throw new HttpError(501, `The test server does not run operator '${operator}'`);
  }
}

function creatorNames(item: ItemData, type?: string): string[] {
  const creators = Array.isArray(item.creators) ? (item.creators as Array<Record<string, unknown>>) : [];
  return creators
    .filter((c) => type === undefined || c.creatorType === type)
    .map((c) =>
      typeof c.name === 'string'
        ? c.name
        : [c.firstName, c.lastName].filter((p) => typeof p === 'string' && p).join(' '),
    );
}

function descendants(scope: Scope, key: string): Set<string> {
  const out = new Set([key]);
  for (let grew = true; grew;) {
    grew = false;
    for (const c of scope.collections.values()) {
      if (c.parentCollection !== false && out.has(c.parentCollection) && !out.has(c.key)) {
        out.add(c.key);
        grew = true;
      }
    }
  }
  return out;
}

function testOf(scope: Scope, c: Condition, recursive: boolean): Test {
  const op = c.operator;
  const value = c.value;
  const base = c.condition.split('/')[0] as string;
  switch (base) {
    case 'tag':
      return (i) =>
        compare(
          op,
          value,
          i.tags.map((t) => t.tag),
        );
    case 'creator':
      return (i) => compare(op, value, creatorNames(i));
    case 'author':
    case 'editor':
    case 'bookAuthor':
      return (i) => compare(op, value, creatorNames(i, base));
    case 'itemType':
      return (i) => compare(op, value, [i.itemType]);
    case 'collection': {
      const keys = recursive ? descendants(scope, value) : new Set([value]);
      const inIt = (i: ItemData): boolean => i.collections.some((k) => keys.has(k));
      if (op === 'is') return inIt;
      if (op === 'isNot') return (i) => !inIt(i);
      break;
    }
    case 'unfiled':
      return (i) => (i.collections.length === 0) === (op === 'true');
    case 'year':
      return (i) => compare(op, value, [typeof i.date === 'string' ? (/\d{4}/.exec(i.date)?.[0] ?? '') : '']);
    case 'dateAdded':
    case 'dateModified':
      if (op === 'isBefore' || op === 'isAfter' || op === 'is' || op === 'isNot') {
        return (i) =>
          op === 'is' || op === 'isNot'
            ? compare(op === 'is' ? 'beginsWith' : 'doesNotContain', value, [lower(i[base])])
            : compare(op, value, [lower(i[base]).slice(0, value.length)]);
      }
      break;
    case 'note':
    case 'childNote':
      return (i) => compare(op, value, [typeof i.note === 'string' ? i.note : '']);
    case 'anyField':
      return (i) =>
        compare(
          op,
          value,
          Object.entries(i)
            .filter(
              ([k, v]) =>
                typeof v === 'string' &&
                !['key', 'itemType', 'dateAdded', 'dateModified', 'parentItem'].includes(k),
            )
            .map(([, v]) => v as string),
        );
    default:
      if (
        /^[a-z][A-Za-z]*$/.test(base) &&
        ![
          'fulltextContent',
          'fulltextWord',
          'annotationText',
          'annotationComment',
          'savedSearch',
          'retracted',
          'publications',
          'fileTypeID',
          'tagID',
          'itemTypeID',
          'lastName',
        ].includes(base)
      ) {
        // An item field (title, DOI, publicationTitle, …).
        return (i) => compare(op, value, [typeof i[base] === 'string' ? (i[base] as string) : '']);
      }
  }
  throw new HttpError(501, `The test server does not run condition '${c.condition}' with '${op}'`);
}

/** The items `search` matches in `scope`. */
export function runSavedSearch(scope: Scope, search: SearchData): ItemData[] {
  const conditions = search.conditions;
  const flag = (name: string): boolean =>
    conditions.some((c) => c.condition === name && c.operator === 'true');
  const any = conditions.some((c) => c.condition === 'joinMode' && c.operator === 'any');
  const trashed = flag('deleted');
  const noChildren = flag('noChildren');
  const recursive = flag('recursive');
  const tests = conditions.filter((c) => !STEERING.has(c.condition)).map((c) => testOf(scope, c, recursive));
  return [...scope.items.values()].filter((item) => {
    if ((item.deleted === true) !== trashed) return false;
    if (noChildren && item.parentItem) return false;
    if (tests.length === 0) return true;
    return any ? tests.some((t) => t(item)) : tests.every((t) => t(item));
  });
}
