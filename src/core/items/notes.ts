/**
 * Child notes of an item: listing them (`items/{key}/children?itemType=note`, paged) and
 * creating one (a batch `POST` of one note with a write token). Plain text is escaped into
 * note HTML; HTML is stored as given.
 */
import { ZoteusError } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import { webClient } from '../library/keys.js';
import { openWebLibrary } from '../library/web.js';
import type { Deps } from '../tool.js';
import { byCodeUnit } from '../text-order.js';
import { createObjects } from '../writes/index.js';
import type { ZoteroObject } from '../zotero/index.js';
import { itemNotFound, unique } from './common.js';
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

export interface ListNotesOutput {
  itemKey: string;
  notes: NoteRow[];
  totalResults: number;
  complete: boolean;
}

export async function listNotes(deps: Deps, input: ListNotesInput): Promise<ListNotesOutput> {
  const client = await webClient(deps);
  const call = client.newCall();
  const lib = await openWebLibrary(deps, input, { access: 'read', call });
  let listing;
  try {
    listing = await lib.client.listAll<ZoteroObject>(`/${lib.prefix}/items/${input.item_key}/children`, {
      query: { itemType: 'note' },
      call,
    });
  } catch (error) {
    if (error instanceof ZoteusError && error.code === 'not_found')
      throw itemNotFound(deps, input.item_key, lib.prefix);
    throw error;
  }
  const notes = listing.objects
    .map((o): NoteRow => {
      const data = (o.data ?? {}) as Record<string, unknown>;
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
  return { itemKey: input.item_key, notes, totalResults: listing.totalResults, complete: listing.complete };
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
