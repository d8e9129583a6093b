/**
 * Zotero's saved-search conditions and the operators each one takes, as Zotero itself defines
 * them: `chrome/content/zotero/xpcom/data/searchConditions.js` of zotero/zotero (read at commit
 * 00e63f0f8a3a81ed881e65764c3541b75fc5254f). Conditions Zotero marks `noLoad` (quick-search
 * ones, block markers, `collectionID`, `savedSearchID`, `libraryID`, `key`, `itemID`) and
 * `tempTable` cannot be stored in a saved search, so they are refused here; the template
 * masters (`field`, `datefield`, `numberfield`) stand for the field names they alias.
 *
 * A condition may carry a mode after a slash (`fulltextContent/regexp`), as Zotero's
 * `parseCondition` splits it; the operators are those of the part before the slash.
 */
import { didYouMean } from '../did-you-mean.js';

/** ` (did you mean 'a'?)`, or '' when nothing is close. */
function nearest(given: string, choices: Iterable<string>): string {
  const text = didYouMean(given, choices);
  return text === '' ? '' : ` (${text})`;
}
import { ZoteusError } from '../errors.js';
import type { ItemSchema } from '../items/schema.js';

export interface SearchCondition {
  condition: string;
  operator: string;
  value: string;
}

/** Every operator Zotero knows (searchConditions.js, `_operators`). */
export const SEARCH_OPERATORS = [
  'is',
  'isNot',
  'beginsWith',
  'contains',
  'doesNotContain',
  'isLessThan',
  'isGreaterThan',
  'isBefore',
  'isAfter',
  'isInTheLast',
  'any',
  'all',
  'true',
  'false',
] as const;

const BOOL = ['true', 'false'] as const;
const IS = ['is', 'isNot'] as const;
const TEXT = ['is', 'isNot', 'contains', 'doesNotContain'] as const;
const CONTAINS = ['contains', 'doesNotContain'] as const;
const DATE = ['is', 'isNot', 'isBefore', 'isAfter', 'isInTheLast'] as const;
const FIELD = ['is', 'isNot', 'contains', 'doesNotContain', 'beginsWith'] as const;
const NUMBER = ['is', 'isNot', 'contains', 'doesNotContain', 'isLessThan', 'isGreaterThan'] as const;

/** The named conditions a saved search may hold, with their operators. */
const NAMED: Record<string, readonly string[]> = {
  deleted: BOOL,
  noChildren: BOOL,
  unfiled: BOOL,
  retracted: BOOL,
  publications: BOOL,
  includeParentsAndChildren: BOOL,
  includeParents: BOOL,
  includeChildren: BOOL,
  recursive: BOOL,
  joinMode: ['any', 'all'],
  collection: IS,
  savedSearch: IS,
  dateAdded: DATE,
  dateModified: DATE,
  itemTypeID: IS,
  itemType: IS,
  fileTypeID: IS,
  tagID: IS,
  tag: TEXT,
  note: CONTAINS,
  childNote: CONTAINS,
  creator: TEXT,
  lastName: TEXT,
  author: TEXT,
  editor: TEXT,
  bookAuthor: TEXT,
  anyField: FIELD,
  year: TEXT,
  annotationText: CONTAINS,
  annotationComment: CONTAINS,
  fulltextWord: CONTAINS,
  fulltextContent: CONTAINS,
};

/** `datefield`'s aliases (the NSF-only `dateDue` and `accepted` exist only with that item type). */
const DATE_FIELDS = ['accessDate', 'date'];
/** `numberfield`'s aliases. */
const NUMBER_FIELDS = ['pages', 'numPages', 'numberOfVolumes', 'section', 'seriesNumber', 'issue'];
/** Fields `field` does not alias (searchConditions.js: `fieldName NOT IN (…)`). */
const NOT_FIELD = new Set(['accessDate', 'date', 'pages', 'section', 'seriesNumber', 'issue']);

/** Conditions that take no value: the value is stored as "". */
const NO_VALUE = new Set(
  Object.entries(NAMED).flatMap(([name, ops]) => (ops === BOOL || name === 'joinMode' ? [name] : [])),
);

/** Condition name → operators, with every item field of the schema as `field`, `datefield` or `numberfield`. */
export function conditionTable(schema: ItemSchema): Map<string, readonly string[]> {
  const table = new Map<string, readonly string[]>();
  for (const field of schema.allFields) if (!NOT_FIELD.has(field)) table.set(field, FIELD);
  for (const field of DATE_FIELDS) table.set(field, DATE);
  for (const field of NUMBER_FIELDS) table.set(field, NUMBER);
  // A named condition wins over a field of the same name, as Zotero's table is built.
  for (const [name, ops] of Object.entries(NAMED)) table.set(name, ops);
  return table;
}

const quote = (s: string): string => `'${s}'`;

/**
 * One `condition operator value` text as its parts: the first word is the condition, the
 * second the operator, the rest (may be empty) the value.
 */
export function parseConditionText(text: string, index: number): SearchCondition {
  const trimmed = text.trim();
  const match = /^(\S+)(?:\s+(\S+))?(?:\s+([\s\S]*))?$/.exec(trimmed);
  if (!match || match[2] === undefined) {
    throw new ZoteusError(
      'validation_error',
      `conditions[${index}]: ${JSON.stringify(text.slice(0, 80))} is not "condition operator value" (e.g. "tag is sea level", "title contains ocean", "deleted false").`,
      { field: 'conditions' },
    );
  }
  return { condition: match[1] as string, operator: match[2], value: (match[3] ?? '').trim() };
}

const ISO_DAY = /^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?$/;
const IN_THE_LAST = /^\d+ (?:days|weeks|months|years)$/;
const KEY = /^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/;

/**
 * Checks one condition against Zotero's names: the condition, the operator it takes, and the
 * values that must be of a known form (an item type, a collection or saved-search key, a date,
 * "N days|weeks|months|years"); an unknown name gets "did you mean".
 */
export function checkCondition(schema: ItemSchema, c: SearchCondition, index: number): SearchCondition {
  const at = `conditions[${index}]`;
  const fail = (message: string, hint?: string): never => {
    throw new ZoteusError('validation_error', `${at}: ${message}`, {
      field: 'conditions',
      ...(hint ? { hint } : {}),
    });
  };
  const table = conditionTable(schema);
  const slash = c.condition.indexOf('/');
  const base = slash === -1 ? c.condition : c.condition.slice(0, slash);
  if (slash !== -1 && slash === c.condition.length - 1)
    fail(`condition ${quote(c.condition)} has an empty mode after "/".`);
  const operators = table.get(base);
  if (!operators) {
    const near = nearest(base, table.keys());
    fail(
      `${quote(base)} is not a Zotero search condition${near}.`,
      'Conditions are Zotero’s: a field name (title, publicationTitle, DOI, …), or creator, author, editor, tag, note, childNote, collection, savedSearch, itemType, dateAdded, dateModified, year, anyField, fulltextContent, deleted, noChildren, unfiled, joinMode, ….',
    );
  }
  const ops = operators as readonly string[];
  if (!ops.includes(c.operator)) {
    const near = nearest(c.operator, ops);
    const known = (SEARCH_OPERATORS as readonly string[]).includes(c.operator);
    fail(
      `operator ${quote(c.operator)} ${known ? `does not apply to condition ${quote(base)}` : 'is not a Zotero search operator'}${near}; ${quote(base)} takes ${ops.map(quote).join(', ')}.`,
    );
  }
  let value = c.value;
  if (NO_VALUE.has(base)) {
    if (value !== '')
      fail(
        `condition ${quote(base)} takes no value (its operator says it all); got ${JSON.stringify(value.slice(0, 40))}.`,
      );
    value = '';
  } else if (value === '') {
    fail(`condition ${quote(base)} needs a value after the operator.`);
  }
  if (base === 'itemType' && !schema.types.has(value)) {
    fail(`${quote(value)} is not a Zotero item type${nearest(value, schema.types.keys())}.`);
  }
  if ((base === 'collection' || base === 'savedSearch') && !KEY.test(value)) {
    fail(
      `the value of ${quote(base)} must be a ${base === 'collection' ? 'collection' : 'saved search'} key (8 characters from 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ); got ${JSON.stringify(value.slice(0, 40))}.`,
    );
  }
  if (
    DATE.includes(c.operator as never) &&
    (base === 'dateAdded' || base === 'dateModified' || DATE_FIELDS.includes(base))
  ) {
    if (c.operator === 'isInTheLast' && !IN_THE_LAST.test(value)) {
      fail(
        `isInTheLast takes "N days", "N weeks", "N months" or "N years"; got ${JSON.stringify(value.slice(0, 40))}.`,
      );
    }
    if ((c.operator === 'isBefore' || c.operator === 'isAfter') && !ISO_DAY.test(value)) {
      fail(`${c.operator} takes a date as YYYY-MM-DD; got ${JSON.stringify(value.slice(0, 40))}.`);
    }
  }
  return { condition: c.condition, operator: c.operator, value };
}

/** The conditions of a new saved search, parsed and checked, in order. */
export function checkConditions(schema: ItemSchema, texts: readonly string[]): SearchCondition[] {
  return texts.map((text, i) => checkCondition(schema, parseConditionText(text, i), i));
}
