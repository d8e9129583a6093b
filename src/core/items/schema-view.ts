/**
 * Zotero's item schema as a caller reads it: item types, each with its fields (and the base
 * field a type-specific one maps onto: `bookTitle` → `publicationTitle`) and its creator types
 * (the primary one first). From the server's `/schema` when it answers, else the cached or
 * bundled copy (schema.ts: `onlineSchema` never fails for want of the network); `source` says
 * which. The whole schema is about 26 KB of JSON, within one answer's bound.
 */
import { didYouMean } from '../did-you-mean.js';
import { ZoteusError } from '../errors.js';
import { webClient } from '../library/keys.js';
import type { Deps } from '../tool.js';
import { onlineSchema, type ItemSchema } from './schema.js';

export interface SchemaItemType {
  itemType: string;
  fields: Array<{ field: string; baseField?: string }>;
  /** The primary creator type first (the one a bare "author" means for this type). */
  creatorTypes: string[];
}

export interface SchemaView {
  version: number;
  source: ItemSchema['source'];
  itemTypes: SchemaItemType[];
}

export function viewOf(schema: ItemSchema, itemType?: string): SchemaView {
  const types = [...schema.types.values()];
  const chosen = itemType === undefined ? types : types.filter((t) => t.itemType === itemType);
  if (itemType !== undefined && chosen.length === 0) {
    const near = didYouMean(
      itemType,
      types.map((t) => t.itemType),
      (t) => `'${t}'`,
    );
    throw new ZoteusError(
      'not_found',
      `There is no item type ${JSON.stringify(itemType)} in Zotero's schema${near ? ` (${near})` : ''}.`,
      {
        field: 'item_type',
        hint: `Item types: ${types.map((t) => t.itemType).join(', ')}.`,
      },
    );
  }
  return {
    version: schema.version,
    source: schema.source,
    itemTypes: chosen.map((t) => ({
      itemType: t.itemType,
      fields: [...t.fields].map(([field, baseField]) => (baseField ? { field, baseField } : { field })),
      creatorTypes: t.primaryCreatorType
        ? [t.primaryCreatorType, ...t.creatorTypes.filter((c) => c !== t.primaryCreatorType)]
        : [...t.creatorTypes],
    })),
  };
}

/** The schema the configured server serves (or the local copy), optionally one item type of it. */
export async function schemaView(deps: Deps, itemType?: string): Promise<SchemaView> {
  const client = await webClient(deps);
  return viewOf(await onlineSchema(deps, client, client.newCall()), itemType);
}
