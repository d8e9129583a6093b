/**
 * Validation of items in the Web API's JSON shape against Zotero's schema, before anything is
 * written: every problem of every item is collected (item index, field path, what is wrong), so
 * one refusal names them all instead of failing on the first.
 */
import { ZoteusError } from '../errors.js';
import { plural } from '../words.js';
import { ZOTERO_KEY_RE } from './common.js';
import { fieldFor, type ItemSchema } from './schema.js';

export interface ItemProblem {
  /** Index of the item in the caller's list. */
  index: number;
  /** Path inside the item, e.g. `title`, `creators[1].creatorType`. */
  field: string;
  message: string;
}

/** Properties of every item that are not schema fields. */
export const COMMON_PROPS = new Set([
  'key',
  'version',
  'itemType',
  'creators',
  'tags',
  'collections',
  'relations',
  'deleted',
  'parentItem',
  'dateAdded',
  'dateModified',
  'inPublications',
]);

export const ATTACHMENT_PROPS = new Set([
  'linkMode',
  'contentType',
  'charset',
  'filename',
  'md5',
  'mtime',
  'path',
  'note',
]);
const LINK_MODES = ['imported_file', 'imported_url', 'linked_file', 'linked_url', 'embedded_image'];
export const ANNOTATION_PROPS = new Set([
  'annotationType',
  'annotationAuthorName',
  'annotationText',
  'annotationComment',
  'annotationColor',
  'annotationPageLabel',
  'annotationSortIndex',
  'annotationPosition',
  'annotationIsExternal',
]);
/** Item types that live under a parent item (and may not be in collections when they do). */
export const CHILD_TYPES = new Set(['note', 'attachment', 'annotation']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** `journalarticle` → `journalArticle`: the closest known type, for the message. */
function closestType(schema: ItemSchema, given: string): string | undefined {
  const lower = given.toLowerCase().replace(/[\s_-]/g, '');
  for (const t of schema.types.keys()) if (t.toLowerCase() === lower) return t;
  return undefined;
}

/**
 * The Web API object wrapper (`{key, version, library, links, meta, data}`) unwrapped to its
 * `data`, which is the shape writes take; anything else is returned as is.
 */
export function unwrapItem(value: unknown): unknown {
  if (isPlainObject(value) && isPlainObject(value.data) && value.itemType === undefined) return value.data;
  return value;
}

function checkCreators(
  problems: ItemProblem[],
  index: number,
  value: unknown,
  itemType: string,
  creatorTypes: string[],
): void {
  if (!Array.isArray(value)) {
    problems.push({ index, field: 'creators', message: 'must be an array of creator objects' });
    return;
  }
  value.forEach((creator, i) => {
    const at = `creators[${i}]`;
    if (!isPlainObject(creator)) {
      problems.push({ index, field: at, message: 'must be an object' });
      return;
    }
    for (const prop of Object.keys(creator)) {
      if (!['creatorType', 'firstName', 'lastName', 'name'].includes(prop)) {
        problems.push({
          index,
          field: `${at}.${prop}`,
          message: 'is not a creator property (creatorType, firstName, lastName, name)',
        });
      }
    }
    const type = creator.creatorType;
    if (typeof type !== 'string') {
      problems.push({ index, field: `${at}.creatorType`, message: 'is required (a string)' });
    } else if (!creatorTypes.includes(type)) {
      problems.push({
        index,
        field: `${at}.creatorType`,
        message:
          creatorTypes.length === 0
            ? `${itemType} items have no creators`
            : `'${type}' is not a creator type of ${itemType} (valid: ${creatorTypes.join(', ')})`,
      });
    }
    const hasName = creator.name !== undefined;
    const hasSplit = creator.lastName !== undefined || creator.firstName !== undefined;
    if (hasName && hasSplit) {
      problems.push({ index, field: at, message: 'has both name and firstName/lastName: use one form' });
    } else if (hasName) {
      if (typeof creator.name !== 'string' || creator.name.trim() === '') {
        problems.push({ index, field: `${at}.name`, message: 'must be a non-empty string' });
      }
    } else if (hasSplit) {
      for (const part of ['firstName', 'lastName'] as const) {
        if (creator[part] !== undefined && typeof creator[part] !== 'string') {
          problems.push({ index, field: `${at}.${part}`, message: 'must be a string' });
        }
      }
      const last = typeof creator.lastName === 'string' ? creator.lastName.trim() : '';
      const first = typeof creator.firstName === 'string' ? creator.firstName.trim() : '';
      if (last === '' && first === '') problems.push({ index, field: at, message: 'has an empty name' });
    } else {
      problems.push({ index, field: at, message: 'needs lastName (and firstName) or name' });
    }
  });
}

function checkTags(problems: ItemProblem[], index: number, value: unknown): void {
  if (!Array.isArray(value)) {
    problems.push({ index, field: 'tags', message: 'must be an array of {tag, type?} objects' });
    return;
  }
  value.forEach((tag, i) => {
    const at = `tags[${i}]`;
    if (!isPlainObject(tag) || typeof tag.tag !== 'string' || tag.tag.trim() === '') {
      problems.push({ index, field: at, message: 'must be an object with a non-empty "tag" string' });
      return;
    }
    for (const prop of Object.keys(tag)) {
      if (prop !== 'tag' && prop !== 'type') {
        problems.push({ index, field: `${at}.${prop}`, message: 'is not a tag property (tag, type)' });
      }
    }
    if (tag.type !== undefined && tag.type !== 0 && tag.type !== 1) {
      problems.push({ index, field: `${at}.type`, message: 'must be 0 (manual) or 1 (automatic)' });
    }
  });
}

function checkKeyList(problems: ItemProblem[], index: number, field: string, value: unknown): void {
  if (!Array.isArray(value)) {
    problems.push({ index, field, message: 'must be an array of collection keys' });
    return;
  }
  value.forEach((key, i) => {
    if (typeof key !== 'string' || !ZOTERO_KEY_RE.test(key)) {
      problems.push({ index, field: `${field}[${i}]`, message: `${show(key)} is not a Zotero key` });
    }
  });
}

function checkRelations(problems: ItemProblem[], index: number, value: unknown): void {
  if (!isPlainObject(value)) {
    problems.push({ index, field: 'relations', message: 'must be an object' });
    return;
  }
  for (const [predicate, object] of Object.entries(value)) {
    const ok =
      typeof object === 'string' || (Array.isArray(object) && object.every((o) => typeof o === 'string'));
    if (!ok) {
      problems.push({ index, field: `relations.${predicate}`, message: 'must be a URI or a list of URIs' });
    }
  }
}

/** Every problem of one item (an empty list when it is valid). */
export function validateItem(schema: ItemSchema, raw: unknown, index: number): ItemProblem[] {
  const problems: ItemProblem[] = [];
  if (!isPlainObject(raw)) {
    return [{ index, field: '(item)', message: 'must be a JSON object with an itemType' }];
  }
  const itemType = raw.itemType;
  if (typeof itemType !== 'string' || itemType === '') {
    problems.push({ index, field: 'itemType', message: 'is required (e.g. "journalArticle", "book")' });
    return problems;
  }
  const spec = schema.types.get(itemType);
  if (!spec) {
    const close = closestType(schema, itemType);
    problems.push({
      index,
      field: 'itemType',
      message: `'${itemType}' is not a Zotero item type${close ? ` (did you mean '${close}'?)` : ''}`,
    });
    return problems;
  }
  const isChild = CHILD_TYPES.has(itemType);
  for (const [prop, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    switch (prop) {
      case 'itemType':
        continue;
      case 'key':
        if (typeof value !== 'string' || !ZOTERO_KEY_RE.test(value)) {
          problems.push({ index, field: 'key', message: `${show(value)} is not a Zotero key` });
        }
        continue;
      case 'version':
        if (value !== 0) {
          problems.push({ index, field: 'version', message: 'must be 0 or absent: these are new items' });
        }
        continue;
      case 'creators':
        checkCreators(problems, index, value, itemType, spec.creatorTypes);
        continue;
      case 'tags':
        checkTags(problems, index, value);
        continue;
      case 'collections':
        checkKeyList(problems, index, 'collections', value);
        if (isChild && raw.parentItem && Array.isArray(value) && value.length > 0) {
          problems.push({ index, field: 'collections', message: 'child items cannot be in collections' });
        }
        continue;
      case 'relations':
        checkRelations(problems, index, value);
        continue;
      case 'deleted':
      case 'inPublications':
        if (typeof value !== 'boolean' && value !== 0 && value !== 1) {
          problems.push({ index, field: prop, message: 'must be true or false' });
        }
        continue;
      case 'parentItem':
        if (value === false || value === null) continue;
        if (!isChild) {
          problems.push({
            index,
            field: 'parentItem',
            message: `only notes, attachments and annotations have a parent item, not ${itemType}`,
          });
        } else if (typeof value !== 'string' || !ZOTERO_KEY_RE.test(value)) {
          problems.push({ index, field: 'parentItem', message: `${show(value)} is not a Zotero key` });
        }
        continue;
      case 'dateAdded':
      case 'dateModified':
        if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
          problems.push({ index, field: prop, message: 'must be an ISO 8601 date-time' });
        }
        continue;
    }
    if (itemType === 'note' && prop === 'note') {
      if (typeof value !== 'string')
        problems.push({ index, field: 'note', message: 'must be a string (HTML)' });
      continue;
    }
    if (itemType === 'attachment' && ATTACHMENT_PROPS.has(prop)) {
      if (prop === 'linkMode' && !LINK_MODES.includes(value as string)) {
        problems.push({ index, field: 'linkMode', message: `must be one of ${LINK_MODES.join(', ')}` });
      } else if (prop !== 'mtime' && typeof value !== 'string') {
        problems.push({ index, field: prop, message: 'must be a string' });
      }
      continue;
    }
    if (itemType === 'annotation' && ANNOTATION_PROPS.has(prop)) continue;
    if (COMMON_PROPS.has(prop)) continue;
    if (!spec.fields.has(prop)) {
      const mapped = fieldFor(schema, itemType, prop);
      problems.push({
        index,
        field: prop,
        message: mapped
          ? `'${prop}' is not a field of ${itemType}: use '${mapped}'`
          : `'${prop}' is not a field of ${itemType}`,
      });
      continue;
    }
    if (typeof value !== 'string') {
      problems.push({ index, field: prop, message: `must be a string; got ${show(value)}` });
    }
  }
  if (itemType === 'attachment' && raw.linkMode === undefined) {
    problems.push({
      index,
      field: 'linkMode',
      message: `is required for attachments (${LINK_MODES.join(', ')})`,
    });
  }
  return problems;
}

export function validateItems(schema: ItemSchema, items: readonly unknown[]): ItemProblem[] {
  return items.flatMap((item, index) => validateItem(schema, item, index));
}

/** At most this many problems are spelled out in the message; `error.failed` has them all. */
const MESSAGE_PROBLEMS = 20;

/**
 * The refusal of a batch with invalid items: `validation_error` naming every problem (item
 * index and field) in the message and, one per problem, in `error.failed`.
 */
export function invalidItemsError(
  problems: readonly ItemProblem[],
  options: { total: number; field?: string; schemaVersion?: number },
): ZoteusError {
  const items = new Set(problems.map((p) => p.index)).size;
  const listed = problems
    .slice(0, MESSAGE_PROBLEMS)
    .map((p) => `items[${p.index}].${p.field}: ${p.message}`)
    .join('; ');
  const more = problems.length > MESSAGE_PROBLEMS ? `; and ${problems.length - MESSAGE_PROBLEMS} more` : '';
  return new ZoteusError(
    'validation_error',
    `${options.total === 1 ? 'The item is' : `${items} of ${plural(options.total, 'item')} ${items === 1 ? 'is' : 'are'}`} invalid (${plural(problems.length, 'problem')}); nothing was written: ${listed}${more}.`,
    {
      field: options.field ?? 'items',
      failed: problems.map((p) => ({
        index: p.index,
        field: p.field,
        code: 400,
        message: p.message,
        reason: 'validation_error',
      })),
      hint: `Fix the named fields and send the batch again. Item types, their fields and creator types follow Zotero's schema${options.schemaVersion !== undefined ? ` (version ${options.schemaVersion})` : ''}; a field of a base type may have a type-specific name (bookSection: bookTitle, not publicationTitle).`,
    },
  );
}

/** The items as they will be sent (API wrappers unwrapped), or the refusal naming every problem. */
export function checkedItems(schema: ItemSchema, items: readonly unknown[]): Array<Record<string, unknown>> {
  const unwrapped = items.map(unwrapItem);
  const problems = validateItems(schema, unwrapped);
  if (problems.length > 0)
    throw invalidItemsError(problems, { total: items.length, schemaVersion: schema.version });
  return unwrapped as Array<Record<string, unknown>>;
}
