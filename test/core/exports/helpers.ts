/** Items in the Web API JSON shape for the export tests, and the bundled item schema. */
import { buildSchema, readBundledSchema } from '../../../src/core/items/schema.js';
import type { WebApiCreator, WebApiItem, WebApiTag } from '../../../src/core/local/sqlite/types.js';

export const schema = buildSchema(readBundledSchema(), 'bundled');

export const person = (firstName: string, lastName: string, creatorType = 'author'): WebApiCreator => ({
  creatorType,
  firstName,
  lastName,
});
export const org = (name: string, creatorType = 'author'): WebApiCreator => ({ creatorType, name });

export interface ItemInput {
  key?: string;
  dateAdded?: string;
  creators?: WebApiCreator[];
  tags?: string[] | WebApiTag[];
  [field: string]: unknown;
}

/** A regular item of `itemType` with the given fields (every other field absent). */
export function item(itemType: string, input: ItemInput = {}): WebApiItem {
  const { key = 'ITEMKEY2', dateAdded = '2024-03-01T10:00:00Z', creators = [], tags = [], ...fields } = input;
  return {
    key,
    version: 1,
    library: { type: 'user', id: 42, name: 'My Library' },
    meta: {},
    data: {
      key,
      version: 1,
      itemType,
      creators,
      tags: tags.map((t) => (typeof t === 'string' ? { tag: t } : t)),
      relations: {},
      dateAdded,
      dateModified: dateAdded,
      ...fields,
    },
  };
}
