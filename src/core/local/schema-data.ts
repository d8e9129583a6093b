/**
 * The Zotero schema (`schema.json`, as `GET /schema` serves it) bundled at
 * `data/zotero-schema.json`: one copy and one loader for the whole product (items/schema.ts);
 * the fixture builder derives its type tables from it.
 */
export {
  BUNDLED_SCHEMA_PATH as ZOTERO_SCHEMA_PATH,
  readBundledSchema as loadZoteroSchemaJson,
  type SchemaJson as ZoteroSchemaJson,
} from '../items/schema.js';
