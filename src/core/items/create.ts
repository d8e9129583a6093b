/**
 * `zotero_create_items`: items given in the Web API's JSON shape, validated against Zotero's
 * schema before anything is written (one invalid item refuses the whole batch, naming every
 * problem), then written 50 per batch `POST` with client-generated keys and a write token
 * (core/writes/create.ts), so that no retry creates an item twice.
 */
import type { LibraryArgs } from '../library/address.js';
import { webClient } from '../library/keys.js';
import { openWebLibrary } from '../library/web.js';
import type { Deps } from '../tool.js';
import { createObjects } from '../writes/index.js';
import { BATCH_SIZE, type FailedEntry } from '../zotero/index.js';
import { onlineSchema, type ItemSchema } from './schema.js';
import { checkedItems, unwrapItem } from './validate.js';

export interface CreateInput extends LibraryArgs {
  items: readonly unknown[];
}

export interface CreateOutput {
  created: Array<{ index: number; key: string; itemType: string; title?: string }>;
  failed: FailedEntry[];
  libraryVersion?: number;
}

function title(item: Record<string, unknown>): string | undefined {
  for (const field of ['title', 'caseName', 'nameOfAct', 'subject']) {
    if (typeof item[field] === 'string') return item[field] as string;
  }
  return undefined;
}

export async function createItems(deps: Deps, input: CreateInput, local: ItemSchema): Promise<CreateOutput> {
  // Validated offline first: invalid input costs no request at all.
  checkedItems(local, input.items);
  const client = await webClient(deps);
  const call = client.newCall();
  const lib = await openWebLibrary(deps, input, { access: 'write', call });
  const schema = await onlineSchema(deps, lib.client, call);
  const items =
    schema.version === local.version ? input.items.map(unwrapItem) : checkedItems(schema, input.items);
  const total = items.length;
  const report = total > BATCH_SIZE;
  const phase = 'create_items';
  if (report) deps.progress({ event: 'start', phase, done: 0, total });
  const out: CreateOutput = { created: [], failed: [] };
  // Keys follow the input index, so a retry of the same request (same idempotency key) finds
  // what an earlier attempt created instead of creating it again.
  const result = await createObjects(lib.client, {
    library: lib.prefix,
    kind: 'items',
    objects: items as Array<Record<string, unknown>>,
    labels: items.map((_, i) => `item/${i}`),
    ids: deps.writeIds,
    call,
    progress: report ? (done) => deps.progress({ event: 'progress', phase, done, total }) : undefined,
  });
  if (result.libraryVersion !== undefined) out.libraryVersion = result.libraryVersion;
  for (const s of result.successful) {
    const item = items[s.index] as Record<string, unknown>;
    const t = title(item);
    out.created.push({
      index: s.index,
      key: s.key,
      itemType: String(item.itemType),
      ...(t !== undefined ? { title: t } : {}),
    });
  }
  out.failed.push(...result.failed);
  if (report) {
    deps.progress({
      event: 'complete',
      phase,
      done: total,
      total,
      succeeded: out.created.length,
      failed: out.failed.length,
    });
  }
  return out;
}
