/**
 * Seeds a test-server library with objects as the Web API serves them (from another backend,
 * say the zotero.sqlite reader), keeping their keys, versions, dates and trash state, so the
 * server and that backend hold the same content and a test can compare their answers.
 */
import type { CollectionData, ItemData, TestLibrary } from './types.js';

interface JsonCollection {
  key: string;
  version: number;
  data: {
    name: string;
    parentCollection: string | false;
    relations?: Record<string, string | string[]>;
    deleted?: unknown;
  };
}

interface JsonItem {
  key: string;
  version: number;
  data: Record<string, unknown> & { collections?: string[]; deleted?: unknown };
}

export function mirrorLibrary(
  lib: TestLibrary,
  content: { collections: readonly JsonCollection[]; items: readonly JsonItem[]; version: number },
): void {
  for (const c of content.collections) {
    const data: CollectionData = {
      key: c.key,
      version: c.version,
      name: c.data.name,
      parentCollection: c.data.parentCollection,
      relations: c.data.relations ?? {},
    };
    if (c.data.deleted) data.deleted = true;
    lib.collections.set(c.key, data);
  }
  for (const i of content.items) {
    const { deleted, collections, ...rest } = structuredClone(i.data);
    const data = { ...rest, key: i.key, version: i.version, collections: collections ?? [] } as ItemData;
    if (deleted) data.deleted = true;
    lib.items.set(i.key, data);
  }
  lib.version = Math.max(lib.version, content.version);
}
