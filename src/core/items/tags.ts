/**
 * `zotero_manage_tags`: tags on items and across the library.
 *
 * - add / remove: the write engine's set-like change over the given items (read 50 at a time,
 *   items already in the wanted state skipped, the rest written 50 at a time with their
 *   versions, 412 re-read and re-applied): 2·⌈n/50⌉ requests for n items. Removing more items
 *   than the bulk-write threshold needs `confirm`.
 * - rename: the Web API has no rename, so the items carrying the tag are listed
 *   (`items?tag=…&format=keys`, one request) and rewritten like an add/remove; an item that
 *   already has the new name just loses the old one. The tag's type (manual/automatic) is kept.
 * - delete: `DELETE /tags?tag=a || b` (50 tags per request) under the library version, after
 *   one `items?tag=…&format=keys` per tag to learn which exist and how many items lose them.
 */
import { ZoteusError } from '../errors.js';
import { webClient } from '../library/keys.js';
import { openWebLibrary, type WebLibrary } from '../library/web.js';
import type { Deps } from '../tool.js';
import { addTags, applySetChangeReported, removeTags, type ObjectData, type Tag } from '../writes/index.js';
import { BATCH_SIZE, chunk, failedByError, type CallContext } from '../zotero/index.js';
import { assertBulkConfirmed, changeOutcome, unique } from './common.js';
import {
  checkTagsCall,
  cleanTag,
  tagsToDelete,
  type TagAction,
  type TagsInput,
  type TagsOutput,
} from './tag-input.js';

export { TAG_ACTIONS, type TagAction, type TagsInput, type TagsOutput } from './tag-input.js';
const DELETE_ROUNDS = 3;

/** Renames `from` to `to` in an item's tags, keeping the type; null when the item lacks `from`. */
export function renameTag(from: string, to: string) {
  return <D extends ObjectData>(data: D): D | null => {
    const tags = Array.isArray(data.tags) ? (data.tags as Tag[]) : [];
    const old = tags.find((t) => t?.tag === from);
    if (!old) return null;
    const hasNew = tags.some((t) => t?.tag === to);
    const next = tags.flatMap((t) => (t?.tag !== from ? [t] : hasNew ? [] : [{ ...t, tag: to }]));
    return { ...data, tags: next };
  };
}

/** A tag as a `tag=` parameter: a leading `-` would mean "not", so it is escaped. */
function tagParam(tag: string): string {
  return tag.startsWith('-') ? `\\${tag}` : tag;
}

/** Keys of every item (trash included) carrying the tag, and the library version they reflect. */
async function itemsWithTag(
  lib: WebLibrary,
  tag: string,
  call: CallContext,
): Promise<{ keys: string[]; version: number | undefined }> {
  const answer = await lib.client.request<unknown>('GET', `/${lib.prefix}/items`, {
    query: { tag: tagParam(tag), format: 'keys', includeTrashed: 1 },
    call,
  });
  const keys = answer.text
    .split(/\s+/)
    .map((k) => k.trim())
    .filter(Boolean);
  return { keys, version: answer.lastModifiedVersion };
}

export async function manageTags(deps: Deps, input: TagsInput): Promise<TagsOutput> {
  checkTagsCall(deps, input);
  const client = await webClient(deps);
  const call = client.newCall();
  const lib = await openWebLibrary(deps, input, { access: 'write', call });
  switch (input.action) {
    case 'add_items':
    case 'remove_items': {
      const tag = cleanTag(input.tag as string, 'tag');
      const keys = input.item_keys as readonly string[];
      return setChange(
        deps,
        lib,
        call,
        input.action,
        keys,
        input.action === 'add_items' ? addTags([tag]) : removeTags([tag]),
      );
    }
    case 'rename': {
      const from = cleanTag(input.tag as string, 'tag');
      const to = cleanTag(input.new_name as string, 'new_name');
      const { keys } = await itemsWithTag(lib, from, call);
      if (keys.length === 0) {
        throw new ZoteusError(
          'not_found',
          `No item in library ${lib.prefix} has the tag '${from}'; nothing was renamed.`,
          {
            field: 'tag',
            hint: 'Tag names are case-sensitive; check the exact spelling.',
          },
        );
      }
      return setChange(deps, lib, call, 'rename', keys, renameTag(from, to));
    }
    case 'delete':
      return deleteTags(deps, lib, call, tagsToDelete(input), input.confirm);
  }
}

async function setChange(
  deps: Deps,
  lib: WebLibrary,
  call: CallContext,
  action: TagAction,
  keys: readonly string[],
  apply: (data: ObjectData) => ObjectData | null,
): Promise<TagsOutput> {
  const phase = `tag_${action}`;
  const total = unique(keys).length;
  const result = await applySetChangeReported(
    lib.client,
    { library: lib.prefix, kind: 'items', keys, apply, call },
    { progress: deps.progress, phase, report: total > BATCH_SIZE },
  );
  return changeOutcome(action, result);
}

async function deleteTags(
  deps: Deps,
  lib: WebLibrary,
  call: CallContext,
  tags: readonly string[],
  confirm: boolean | undefined,
): Promise<TagsOutput> {
  const found = await Promise.all(tags.map((tag) => itemsWithTag(lib, tag, call)));
  const existing = tags.filter((_, i) => (found[i]?.keys.length ?? 0) > 0);
  const absent = tags.filter((_, i) => (found[i]?.keys.length ?? 0) === 0);
  const affected = new Set(found.flatMap((f) => f.keys));
  let version = Math.max(0, ...found.map((f) => f.version ?? 0));
  assertBulkConfirmed(
    deps,
    {
      count: affected.size,
      what: `Deleting ${existing.length} tag${existing.length === 1 ? '' : 's'} from the ${affected.size} item${affected.size === 1 ? '' : 's'} that have ${existing.length === 1 ? 'it' : 'them'}`,
    },
    confirm,
  );
  const out: TagsOutput = {
    action: 'delete',
    deleted: [],
    unchanged: absent,
    itemsAffected: affected.size,
    failed: [],
  };
  const parts = chunk(existing);
  for (let c = 0; c < parts.length; c++) {
    const part = parts[c] as string[];
    try {
      for (let round = 1; ; round++) {
        try {
          const response = await lib.client.request('DELETE', `/${lib.prefix}/tags`, {
            // A tag list, not a search: no negation, so nothing to escape.
            query: { tag: part.join(' || ') },
            ifUnmodifiedSinceVersion: version,
            call,
          });
          version = response.lastModifiedVersion ?? version;
          out.deleted?.push(...part);
          break;
        } catch (error) {
          if (!(error instanceof ZoteusError) || error.status !== 412 || round >= DELETE_ROUNDS) throw error;
          // Someone wrote in between: deleting a tag is a set-like change, so take their version.
          const probe = await lib.client.request('GET', `/${lib.prefix}/items`, {
            query: { limit: 1 },
            call,
          });
          version = probe.lastModifiedVersion ?? version;
        }
      }
    } catch (error) {
      if (c === 0) throw error;
      const err = error instanceof ZoteusError ? error : new ZoteusError('internal_error', String(error));
      for (const tag of parts.slice(c).flat()) out.failed.push(failedByError(tags.indexOf(tag), tag, err));
      break;
    }
  }
  if (existing.length > 0 || version > 0) out.libraryVersion = version;
  return out;
}
