/**
 * Name-based resolution of Zotero's item types, fields and creator types. Their numeric ids
 * differ between databases (custom types, schema updates): code never hard-codes one, it
 * asks this map. Reads `itemTypesCombined`/`fieldsCombined` (Zotero 7+, custom types
 * included) when present, else `itemTypes`/`fields`.
 */
import type BetterSqlite3 from 'better-sqlite3';

export interface ZoteroSchemaMap {
  /** Whether the `…Combined` tables were used. */
  readonly combined: boolean;
  itemTypeName(itemTypeID: number): string | undefined;
  itemTypeId(typeName: string): number | undefined;
  fieldName(fieldID: number): string | undefined;
  fieldId(fieldName: string): number | undefined;
  creatorTypeName(creatorTypeID: number): string | undefined;
  creatorTypeId(creatorType: string): number | undefined;
  /** The fields of an item type in Zotero's display order (`itemTypeFields.orderIndex`). */
  fieldsOf(typeName: string): readonly string[];
  /** The base field a type-specific field maps to (`bookTitle` in bookSection → `publicationTitle`). */
  baseFieldOf(typeName: string, fieldName: string): string | undefined;
  /** The type-specific field that stands for a base field in a type (`publicationTitle` in bookSection → `bookTitle`). */
  typeFieldFor(typeName: string, baseFieldName: string): string | undefined;
  /** Every field id that is, or maps to, this base field (for queries across item types). */
  fieldIdsFor(baseFieldName: string): number[];
  /** The item type's primary creator type (`author` for most, `artist` for artwork, …). */
  primaryCreatorType(typeName: string): string | undefined;
  readonly itemTypes: readonly string[];
}

function hasTable(db: BetterSqlite3.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

export function loadSchemaMap(db: BetterSqlite3.Database): ZoteroSchemaMap {
  const combined = hasTable(db, 'itemTypesCombined') && hasTable(db, 'fieldsCombined');
  const typeRows = db
    .prepare(`SELECT itemTypeID AS id, typeName AS name FROM ${combined ? 'itemTypesCombined' : 'itemTypes'}`)
    .all() as Array<{ id: number; name: string }>;
  const fieldRows = db
    .prepare(`SELECT fieldID AS id, fieldName AS name FROM ${combined ? 'fieldsCombined' : 'fields'}`)
    .all() as Array<{ id: number; name: string }>;
  const creatorRows = db
    .prepare('SELECT creatorTypeID AS id, creatorType AS name FROM creatorTypes')
    .all() as Array<{ id: number; name: string }>;
  const itfTable =
    combined && hasTable(db, 'itemTypeFieldsCombined') ? 'itemTypeFieldsCombined' : 'itemTypeFields';
  const itfRows = db
    .prepare(`SELECT itemTypeID AS t, fieldID AS f FROM ${itfTable} ORDER BY itemTypeID, orderIndex`)
    .all() as Array<{ t: number; f: number }>;
  const bfmTable =
    combined && hasTable(db, 'baseFieldMappingsCombined') ? 'baseFieldMappingsCombined' : 'baseFieldMappings';
  const bfmRows = db
    .prepare(`SELECT itemTypeID AS t, baseFieldID AS b, fieldID AS f FROM ${bfmTable}`)
    .all() as Array<{ t: number; b: number; f: number }>;
  const primaryRows = hasTable(db, 'itemTypeCreatorTypes')
    ? (db
        .prepare(
          'SELECT itemTypeID AS t, creatorTypeID AS c FROM itemTypeCreatorTypes WHERE primaryField = 1',
        )
        .all() as Array<{ t: number; c: number }>)
    : [];

  const typeById = new Map(typeRows.map((r) => [r.id, r.name]));
  const typeByName = new Map(typeRows.map((r) => [r.name, r.id]));
  const fieldById = new Map(fieldRows.map((r) => [r.id, r.name]));
  const fieldByName = new Map(fieldRows.map((r) => [r.name, r.id]));
  const creatorById = new Map(creatorRows.map((r) => [r.id, r.name]));
  const creatorByName = new Map(creatorRows.map((r) => [r.name, r.id]));

  const fieldsByType = new Map<string, string[]>();
  for (const r of itfRows) {
    const t = typeById.get(r.t);
    const f = fieldById.get(r.f);
    if (t === undefined || f === undefined) continue;
    let list = fieldsByType.get(t);
    if (!list) fieldsByType.set(t, (list = []));
    list.push(f);
  }
  /** `${type}\t${field}` → base field name, and `${type}\t${base}` → field name. */
  const toBase = new Map<string, string>();
  const toTypeField = new Map<string, string>();
  const idsForBase = new Map<string, Set<number>>();
  for (const r of bfmRows) {
    const t = typeById.get(r.t);
    const b = fieldById.get(r.b);
    const f = fieldById.get(r.f);
    if (t === undefined || b === undefined || f === undefined) continue;
    toBase.set(`${t}\t${f}`, b);
    toTypeField.set(`${t}\t${b}`, f);
    let ids = idsForBase.get(b);
    if (!ids) idsForBase.set(b, (ids = new Set()));
    ids.add(r.f);
  }
  const primary = new Map<string, string>();
  for (const r of primaryRows) {
    const t = typeById.get(r.t);
    const c = creatorById.get(r.c);
    if (t !== undefined && c !== undefined) primary.set(t, c);
  }

  return {
    combined,
    itemTypes: [...typeByName.keys()],
    itemTypeName: (id) => typeById.get(id),
    itemTypeId: (name) => typeByName.get(name),
    fieldName: (id) => fieldById.get(id),
    fieldId: (name) => fieldByName.get(name),
    creatorTypeName: (id) => creatorById.get(id),
    creatorTypeId: (name) => creatorByName.get(name),
    fieldsOf: (type) => fieldsByType.get(type) ?? [],
    baseFieldOf: (type, field) => toBase.get(`${type}\t${field}`),
    typeFieldFor: (type, base) => toTypeField.get(`${type}\t${base}`),
    fieldIdsFor(base) {
      const ids = new Set(idsForBase.get(base) ?? []);
      const own = fieldByName.get(base);
      if (own !== undefined) ids.add(own);
      return [...ids];
    },
    primaryCreatorType: (type) => primary.get(type),
  };
}
