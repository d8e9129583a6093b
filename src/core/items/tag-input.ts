/**
 * The input of `zotero_manage_tags`, checked without any request: the fields each action
 * needs, tag names, and the bulk-write threshold for remove.
 */
import { ZoteusError } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import type { Deps } from '../tool.js';
import type { FailedEntry } from '../zotero/index.js';
import { items } from '../call/bulk.js';
import { assertBulkConfirmed, unique } from './common.js';

export const TAG_ACTIONS = ['add_items', 'remove_items', 'rename', 'delete'] as const;
export type TagAction = (typeof TAG_ACTIONS)[number];
export const TAG_MAX = 255;

export interface TagsInput extends LibraryArgs {
  action: TagAction;
  tag?: string | undefined;
  item_keys?: readonly string[] | undefined;
  new_name?: string | undefined;
  tags?: readonly string[] | undefined;
  confirm?: boolean | undefined;
}

export interface TagsOutput {
  action: TagAction;
  /** add/remove/rename: item keys this call changed. */
  updated?: string[];
  /** add/remove/rename: item keys already in the wanted state; delete: tags that were not in the library. */
  unchanged?: string[];
  /** delete: the tags deleted. */
  deleted?: string[];
  /** delete: items that lost a tag. */
  itemsAffected?: number;
  failed: FailedEntry[];
  libraryVersion?: number;
}

function need<T>(value: T | undefined, field: string, action: string): T {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) {
    throw new ZoteusError('validation_error', `${field} is required for action "${action}".`, { field });
  }
  return value;
}

export function cleanTag(tag: string, field: string): string {
  const t = tag.trim();
  if (t === '') throw new ZoteusError('validation_error', `${field} must not be empty.`, { field });
  if (t.length > TAG_MAX)
    throw new ZoteusError('validation_error', `${field} is longer than ${TAG_MAX} characters.`, { field });
  return t;
}

/** The tags `delete` acts on: `tags`, plus `tag` when given. */
export function tagsToDelete(input: Pick<TagsInput, 'tag' | 'tags'>): string[] {
  const list = unique(
    [...(input.tags ?? []), ...(input.tag !== undefined ? [input.tag] : [])].map((t) => cleanTag(t, 'tags')),
  );
  for (const t of list) {
    if (t.includes('||')) {
      throw new ZoteusError(
        'validation_error',
        `Tag '${t}' contains '||', which the Web API reads as "or" in a tag list.`,
        {
          field: 'tags',
          hint: 'Remove it from its items with action "remove_items" instead.',
        },
      );
    }
  }
  return list;
}

/** What each action needs, checked offline before anything else (the call pipeline's `check`). */
export function checkTagsInput(input: TagsInput): void {
  switch (input.action) {
    case 'add_items':
    case 'remove_items':
      cleanTag(need(input.tag, 'tag', input.action), 'tag');
      need(input.item_keys, 'item_keys', input.action);
      return;
    case 'rename': {
      const from = cleanTag(need(input.tag, 'tag', 'rename'), 'tag');
      const to = cleanTag(need(input.new_name, 'new_name', 'rename'), 'new_name');
      if (from === to)
        throw new ZoteusError('validation_error', 'new_name is the same as tag: nothing to rename.', {
          field: 'new_name',
        });
      return;
    }
    case 'delete':
      need(tagsToDelete(input), 'tags', 'delete');
      return;
  }
}

/** remove_items on many items is bulk-destructive: the pipeline's bulk-write threshold applies. */
export function tagsBulk(input: TagsInput): { count: number; what: string } | undefined {
  if (input.action !== 'remove_items') return undefined;
  const count = unique(input.item_keys ?? []).length;
  return { count, what: `Removing tag '${input.tag}' from items (${items(count)})` };
}

/** checkTagsInput and the bulk threshold, for callers outside the pipeline. */
export function checkTagsCall(deps: Pick<Deps, 'config' | 'surface'>, input: TagsInput): void {
  checkTagsInput(input);
  const bulk = tagsBulk(input);
  if (bulk) assertBulkConfirmed(deps, bulk, input.confirm);
}
