/**
 * The fields an update asks for, read from its several spellings (`fields`, `name=value`
 * pairs, `title`, `date`) and checked against the schema without any request.
 */
import { ZoteusError } from '../errors.js';
import type { ItemSchema } from './schema.js';
import { onlyOn, paramRef, toolRef } from '../call/refs.js';

/** The parts of an update's input that name fields. */
export interface FieldsInput {
  fields?: Record<string, string> | undefined;
  /** `name=value` pairs (the CLI's `--field`). */
  field?: readonly string[] | undefined;
  title?: string | undefined;
  date?: string | undefined;
}

/** Properties an update may not touch: they have their own tools, or are the server's. */
const NOT_FIELDS: Record<string, string> = {
  itemType: 'the item type cannot be changed here',
  key: 'the key is the item’s identity',
  version: 'the version is managed by Zotero',
  creators: 'creators are not a text field',
  tags: `use ${toolRef('zotero_manage_tags', { action: 'add_items' })} or ${toolRef('zotero_manage_tags', { action: 'remove_items' })}`,
  collections: `use ${toolRef('zotero_manage_collections', { action: 'add_items' })} or ${toolRef('zotero_manage_collections', { action: 'remove_items' })}`,
  relations: 'relations are not a text field',
  deleted: `use ${toolRef('zotero_trash_items', { action: 'trash' })} or ${toolRef('zotero_trash_items', { action: 'restore' })}`,
  parentItem: 'the parent item cannot be changed here',
  dateAdded: 'dateAdded is set by Zotero',
  dateModified: 'dateModified is set by Zotero',
};

/** The requested changes as one map of name → value, from `fields`, `field` pairs, `title` and `date`. */
export function requestedChanges(input: FieldsInput): Map<string, string> {
  const out = new Map<string, string>();
  const put = (name: string, value: string, source: string): void => {
    const prior = out.get(name);
    if (prior !== undefined && prior !== value) {
      throw new ZoteusError(
        'validation_error',
        `${name} is given twice with different values ('${prior}' and '${value}').`,
        {
          field: source,
        },
      );
    }
    out.set(name, value);
  };
  for (const [name, value] of Object.entries(input.fields ?? {})) put(name, value, 'fields');
  for (const pair of input.field ?? []) {
    const at = pair.indexOf('=');
    const name = at < 0 ? '' : pair.slice(0, at).trim();
    if (at < 0 || !/^[A-Za-z][A-Za-z0-9]*$/.test(name)) {
      throw new ZoteusError('validation_error', `'${pair}' is not name=value (e.g. volume=12).`, {
        field: 'field',
        hint: `Each ${paramRef('field')} value is one field name, an equals sign, and the value (an empty value clears the field).`,
      });
    }
    put(name, pair.slice(at + 1), 'field');
  }
  if (input.title !== undefined) put('title', input.title, 'title');
  if (input.date !== undefined) put('date', input.date, 'date');
  if (out.size === 0) {
    throw new ZoteusError('validation_error', 'Nothing to change: give at least one field.', {
      field: 'fields',
      hint: `e.g. ${paramRef('title', '"New title"')}, ${paramRef('date', '2021')}, ${onlyOn('cli', '--field volume=12')}${onlyOn('mcp', 'fields: {"volume": "12"}')}.`,
    });
  }
  return out;
}

/** Names that are no Zotero field of any type (checked offline, before any request). */
export function checkFieldNames(schema: ItemSchema, names: Iterable<string>): void {
  const problems: string[] = [];
  for (const name of names) {
    if (NOT_FIELDS[name]) problems.push(`${name}: ${NOT_FIELDS[name]}`);
    else if (name !== 'note' && !schema.allFields.has(name)) problems.push(`${name}: not a Zotero field`);
  }
  if (problems.length > 0) {
    throw new ZoteusError('validation_error', `Cannot update: ${problems.join('; ')}.`, {
      field: 'fields',
      hint: "Field names follow Zotero's schema (title, date, volume, pages, DOI, abstractNote, extra, …).",
    });
  }
}
