/**
 * A change of item type as Zotero makes it (dataserver and desktop `setType`): a field the new
 * type lacks is cleared, unless the new type has a field on the same base field, which then
 * takes its value (a preprint's `repository` is a report's `institution`: both are
 * `publisher`). Read from the schema the product bundles, so both agree. Test code only.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface TypeFields {
  /** Field → its base field (the field itself when it is a base field). */
  base: Map<string, string>;
  /** Base field → this type's field. */
  byBase: Map<string, string>;
}

let types: Map<string, TypeFields> | undefined;

function schemaTypes(): Map<string, TypeFields> {
  if (types) return types;
  const path = fileURLToPath(new URL('../../../data/zotero-schema.json', import.meta.url));
  const json = JSON.parse(readFileSync(path, 'utf8')) as {
    itemTypes: Array<{ itemType: string; fields: Array<{ field: string; baseField?: string }> }>;
  };
  types = new Map();
  for (const t of json.itemTypes) {
    const base = new Map<string, string>();
    const byBase = new Map<string, string>();
    for (const f of t.fields) {
      base.set(f.field, f.baseField ?? f.field);
      byBase.set(f.baseField ?? f.field, f.field);
    }
    types.set(t.itemType, { base, byBase });
  }
  return types;
}

/** Fields every item has besides its type's own (never cleared by a type change). */
const KEPT = new Set([
  'key',
  'version',
  'itemType',
  'collections',
  'tags',
  'relations',
  'dateAdded',
  'dateModified',
  'deleted',
  'parentItem',
  'creators',
  'extra',
]);

/** `item` moved from type `from` to its current type, fields given in this write kept as given. */
export function retype(item: Record<string, unknown>, from: string, given: ReadonlySet<string>): void {
  const old = schemaTypes().get(from);
  const now = schemaTypes().get(String(item.itemType));
  if (!old || !now) return;
  for (const field of Object.keys(item)) {
    if (KEPT.has(field) || given.has(field) || now.base.has(field) || !old.base.has(field)) continue;
    const target = now.byBase.get(old.base.get(field) as string);
    if (target && !given.has(target) && (item[target] === undefined || item[target] === ''))
      item[target] = item[field];
    delete item[field];
  }
}
