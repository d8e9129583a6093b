/**
 * `zotero_create_items`: items given in the Web API's JSON shape, validated against Zotero's
 * schema before anything is written (one invalid item refuses the whole batch, naming every
 * problem), then written 50 per batch `POST` with a write token.
 */
import { toZoteusError } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import { webClient } from '../library/keys.js';
import { openWebLibrary } from '../library/web.js';
import type { Deps } from '../tool.js';
import { BATCH_SIZE, chunk, type FailedEntry } from '../zotero/index.js';
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
  const parts = chunk(items.map((_, i) => i));
  let done = 0;
  for (let c = 0; c < parts.length; c++) {
    const indexes = parts[c] as number[];
    const body = indexes.map((i) => items[i] as Record<string, unknown>);
    let result;
    try {
      result = await lib.client.writeBatch(lib.prefix, 'items', body, { call });
    } catch (error) {
      // The first request failing is the call's failure; a later one leaves the rest failed.
      if (c === 0) throw error;
      const e = toZoteusError(error);
      for (const i of parts.slice(c).flat()) {
        out.failed.push({ index: i, code: e.status ?? 0, message: e.message, reason: e.code });
      }
      break;
    }
    if (result.libraryVersion !== undefined)
      out.libraryVersion = Math.max(out.libraryVersion ?? 0, result.libraryVersion);
    for (const s of result.successful) {
      const index = indexes[s.index] as number;
      const item = items[index] as Record<string, unknown>;
      const t = title(item);
      out.created.push({
        index,
        key: s.key,
        itemType: String(item.itemType),
        ...(t !== undefined ? { title: t } : {}),
      });
    }
    for (const f of result.failed) out.failed.push({ ...f, index: indexes[f.index] as number });
    done += indexes.length;
    if (report) deps.progress({ event: 'progress', phase, done, total });
  }
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
