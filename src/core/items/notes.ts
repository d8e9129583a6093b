/**
 * Child notes of an item: listing them (the children the router's backend reads, so without a
 * key from the desktop) and creating one (a batch `POST` of one note with a write token, always
 * through the Web API). Plain text is escaped into note HTML; HTML is stored as given.
 */
import { toolRef } from '../call/refs.js';
import { ZoteusError } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import { webClient } from '../library/keys.js';
import type { WebApiItem } from '../library/port.js';
import { openWebLibrary } from '../library/web.js';
import type { Deps } from '../tool.js';
import { byCodeUnit } from '../text-order.js';
import { createObjects } from '../writes/index.js';
import { itemNotFound, unique } from './common.js';
import {
  answered,
  assertKeysWellFormed,
  itemNotFound as readNotFound,
  openReader,
  type Answered,
} from './read/common.js';
import { htmlToText, noteHtml, noteTitle } from './html.js';

export interface ListNotesInput extends LibraryArgs {
  item_key: string;
  include_html?: boolean | undefined;
}

export interface NoteRow {
  key: string;
  version: number;
  title: string;
  text: string;
  html?: string;
  tags: string[];
  dateModified?: string;
}

export interface ListNotesOutput extends Answered {
  itemKey: string;
  notes: NoteRow[];
  totalResults: number;
  complete: boolean;
  /** Why there are no notes, when the key is itself a note. */
  message?: string;
}

/**
 * The child notes of an item, from whichever backend the router picks for the library (the
 * desktop's local API or zotero.sqlite without a key, else the Web API). A key that names no
 * item is `not_found`: the Web API answers 404 for its children, a local backend none, and
 * the item itself then says whether it exists.
 */
export async function listNotes(deps: Deps, input: ListNotesInput): Promise<ListNotesOutput> {
  assertKeysWellFormed(deps, [input.item_key]);
  const { reader, route } = await openReader(deps, input);
  let children: WebApiItem[];
  try {
    children = await reader.children(input.item_key);
  } catch (error) {
    if (error instanceof ZoteusError && error.code === 'not_found')
      throw readNotFound(deps, [input.item_key], route.library);
    throw error;
  }
  const item = children.length === 0 ? await reader.item(input.item_key) : undefined;
  if (children.length === 0 && !item) throw readNotFound(deps, [input.item_key], route.library);
  // A note has no notes of its own: say what it is and how to read it.
  const message =
    item?.data.itemType === 'note'
      ? `${input.item_key} is itself a note, not an item with notes: ${toolRef('zotero_get_item', { item_key: input.item_key })} reads its text.`
      : undefined;
  const notes = children
    .filter((o) => o.data.itemType === 'note' && !o.data.deleted)
    .map((o): NoteRow => {
      const data = o.data as Record<string, unknown>;
      const html = typeof data.note === 'string' ? data.note : '';
      const text = htmlToText(html);
      const tags = Array.isArray(data.tags)
        ? (data.tags as Array<{ tag?: unknown }>)
            .map((t) => t?.tag)
            .filter((t): t is string => typeof t === 'string')
        : [];
      return {
        key: o.key,
        version: o.version,
        title: noteTitle(text),
        text,
        ...(input.include_html ? { html } : {}),
        tags,
        ...(typeof data.dateModified === 'string' ? { dateModified: data.dateModified } : {}),
      };
    })
    .sort((a, b) => byCodeUnit(a.dateModified ?? '', b.dateModified ?? '') || byCodeUnit(a.key, b.key));
  return {
    itemKey: input.item_key,
    notes,
    totalResults: notes.length,
    complete: true,
    ...(message ? { message } : {}),
    ...answered(route),
  };
}

export interface CreateNoteInput extends LibraryArgs {
  parent_item: string;
  text?: string | undefined;
  html?: string | undefined;
  tags?: readonly string[] | undefined;
}

export interface CreateNoteOutput {
  key: string;
  parentItem: string;
  title: string;
  chars: number;
  libraryVersion?: number;
}

export async function createNote(deps: Deps, input: CreateNoteInput): Promise<CreateNoteOutput> {
  const html = noteHtml(input);
  const client = await webClient(deps);
  const call = client.newCall();
  const lib = await openWebLibrary(deps, input, { access: 'write', call });
  const tags = unique((input.tags ?? []).map((t) => t.trim()).filter(Boolean));
  const note: Record<string, unknown> = { itemType: 'note', note: html, parentItem: input.parent_item };
  if (tags.length) note.tags = tags.map((tag) => ({ tag }));
  const result = await createObjects(lib.client, {
    library: lib.prefix,
    kind: 'items',
    objects: [note],
    labels: ['note'],
    ids: deps.writeIds,
    call,
  });
  const made = result.successful[0];
  if (!made) {
    const failure = result.failed[0];
    if (failure && (failure.code === 409 || failure.code === 404) && /parent/i.test(failure.message)) {
      throw itemNotFound(deps, input.parent_item, lib.prefix, {
        field: 'parent_item',
        tail: 'no note was created',
      });
    }
    const code = (failure?.reason ?? 'api_error') as ConstructorParameters<typeof ZoteusError>[0];
    throw new ZoteusError(
      code,
      `Zotero refused the note (HTTP ${failure?.code ?? 0}): ${failure?.message ?? 'no answer for it'}.`,
      {
        status: failure?.code,
        ...(failure?.code === 400
          ? { hint: 'A note must be under a regular item (not under another note or an attachment).' }
          : {}),
      },
    );
  }
  const text = htmlToText(html);
  return {
    key: made.key,
    parentItem: input.parent_item,
    title: noteTitle(text),
    chars: html.length,
    ...(result.libraryVersion !== undefined ? { libraryVersion: result.libraryVersion } : {}),
  };
}
