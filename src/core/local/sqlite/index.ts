export { openZoteroSqlite, SUPPORTED_SCHEMA } from './reader.js';
export type { OpenZoteroSqliteOptions, ReaderStatus, ZoteroSqliteReader } from './reader.js';
export type { ZoteroSchemaMap } from './schema-map.js';
export { fold, foldForSearch, queryWords, htmlToText } from './text.js';
export type * from './types.js';
export type { KeyFacts } from './exports.js';
