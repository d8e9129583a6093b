/**
 * `zotero_update_item`: changes fields of one item with `PATCH` under the item's version.
 *
 * A `412` means someone else wrote the item after we read it. The item is read again: when
 * none of the fields being changed was changed by them (or they set the same value), the
 * change is re-applied to their version (bounded rounds); when one was, nothing is written
 * and the call is a `conflict` naming those fields, so no one's edit is silently overwritten.
 */
import { ZoteusError } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import { webClient } from '../library/keys.js';
import { openWebLibrary, type WebLibrary } from '../library/web.js';
import type { Deps } from '../tool.js';
import { outcomeUnknown } from '../writes/index.js';
import type { CallContext, ZoteroObject } from '../zotero/index.js';
import { itemNotFound } from './common.js';
import { checkFieldNames, requestedChanges } from './fields.js';
import { fieldFor, onlineSchema, type ItemSchema } from './schema.js';
import { toolRef } from '../call/refs.js';

export const UPDATE_ROUNDS = 3;

export interface UpdateInput extends LibraryArgs {
  item_key: string;
  fields?: Record<string, string> | undefined;
  /** `name=value` pairs (the CLI's `--field`). */
  field?: readonly string[] | undefined;
  title?: string | undefined;
  date?: string | undefined;
  dry_run?: boolean | undefined;
}

export interface FieldChange {
  field: string;
  from: string;
  to: string;
}

export interface UpdateOutput {
  key: string;
  itemType: string;
  /** Field by field, old and new value ('' when empty); what was written, or with dry_run what would be. */
  changes: FieldChange[];
  /** Fields that already had the requested value: nothing was sent for them. */
  unchanged: string[];
  dryRun: boolean;
  /** The item's version after the write (before it, with dry_run or when nothing changed). */
  version: number;
  libraryVersion?: number;
  /** Times the change was re-applied after someone else's write to other fields. */
  reapplied: number;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

function show(value: string): string {
  const t = JSON.stringify(value);
  return t.length > 60 ? `${t.slice(0, 57)}..."` : t;
}

/** The requested names mapped onto the item's own fields (`title` → `caseName` for a case). */
function resolveFields(
  schema: ItemSchema,
  itemType: string,
  requested: Map<string, string>,
): Map<string, string> {
  const out = new Map<string, string>();
  const wrong: string[] = [];
  for (const [name, value] of requested) {
    const field = itemType === 'note' && name === 'note' ? 'note' : fieldFor(schema, itemType, name);
    if (!field) wrong.push(name);
    else out.set(field, value);
  }
  if (wrong.length > 0) {
    const spec = schema.types.get(itemType);
    const valid = spec ? [...spec.fields.keys()] : [];
    throw new ZoteusError(
      'validation_error',
      `${wrong.map((w) => `'${w}'`).join(', ')} ${wrong.length === 1 ? 'is not a field' : 'are not fields'} of ${itemType} items; nothing was written.`,
      {
        field: 'fields',
        hint: valid.length
          ? `Fields of ${itemType}: ${valid.join(', ')}.`
          : `${itemType} items have no text fields to change.`,
      },
    );
  }
  return out;
}

async function readItem(deps: Deps, lib: WebLibrary, key: string, call: CallContext): Promise<ZoteroObject> {
  const read = await lib.client.getByKeys(lib.prefix, 'items', [key], { call });
  const object = read.byKey.get(key);
  if (!object) throw itemNotFound(deps, key, lib.prefix, { tail: 'nothing was written' });
  return object;
}

function diff(
  data: Record<string, unknown>,
  target: Map<string, string>,
): { changes: FieldChange[]; unchanged: string[] } {
  const changes: FieldChange[] = [];
  const unchanged: string[] = [];
  for (const [field, to] of target) {
    const from = text(data[field]);
    if (from === to) unchanged.push(field);
    else changes.push({ field, from, to });
  }
  return { changes, unchanged };
}

export async function updateItem(
  deps: Deps,
  input: UpdateInput,
  localSchema: ItemSchema,
): Promise<UpdateOutput> {
  const requested = requestedChanges(input);
  checkFieldNames(localSchema, requested.keys());
  const key = input.item_key;
  const client = await webClient(deps);
  const call = client.newCall();
  const lib = await openWebLibrary(deps, input, { access: input.dry_run ? 'read' : 'write', call });
  const schema = await onlineSchema(deps, lib.client, call);
  let object = await readItem(deps, lib, key, call);
  let data = (object.data ?? {}) as Record<string, unknown>;
  const itemType = text(data.itemType);
  const target = resolveFields(schema, itemType, requested);
  let { changes, unchanged } = diff(data, target);
  let version = object.version ?? Number(data.version);
  const base: UpdateOutput = {
    key,
    itemType,
    changes,
    unchanged,
    dryRun: input.dry_run === true,
    version,
    reapplied: 0,
  };
  if (input.dry_run || changes.length === 0) return base;

  /** The values this change was computed against: a field that moved away from them is someone else's edit. */
  const seen = new Map(changes.map((c) => [c.field, c.from]));
  for (let round = 1; ; round++) {
    try {
      const body = Object.fromEntries(changes.map((c) => [c.field, c.to]));
      const written = await lib.client.patch(lib.prefix, 'items', key, body, version, { call });
      const after = written.version ?? version;
      return { ...base, changes, unchanged, version: after, libraryVersion: after, reapplied: round - 1 };
    } catch (error) {
      if (error instanceof ZoteusError && outcomeUnknown(error) && round < UPDATE_ROUNDS) {
        // The answer was lost: read the item. Moved on and as wanted: our change landed. Not
        // moved: it did not, and the versioned PATCH is safe to send again.
        const sentAt = version;
        object = await readItem(deps, lib, key, call);
        data = (object.data ?? {}) as Record<string, unknown>;
        version = object.version ?? Number(data.version);
        if (version > sentAt && diff(data, target).changes.length === 0) {
          return { ...base, changes, unchanged, version, libraryVersion: version, reapplied: round - 1 };
        }
        if (version === sentAt) continue;
        // Someone else wrote in between: the 412 path below decides, as for any conflict.
      } else if (!(error instanceof ZoteusError) || error.status !== 412) throw error;
      if (round >= UPDATE_ROUNDS) {
        throw new ZoteusError(
          'conflict',
          `Item ${key} kept changing during the update (${UPDATE_ROUNDS} rounds of read and re-apply); nothing was written.`,
          { retryable: true, status: 412, hint: 'Another client is editing it; retry in a moment.' },
        );
      }
      if (!(error instanceof ZoteusError && outcomeUnknown(error))) {
        object = await readItem(deps, lib, key, call);
        data = (object.data ?? {}) as Record<string, unknown>;
        version = object.version ?? Number(data.version);
      }
      const theirs = changes.filter((c) => {
        const now = text(data[c.field]);
        return now !== seen.get(c.field) && now !== c.to;
      });
      if (theirs.length > 0) throw conflictError(deps, key, theirs, data);
      ({ changes, unchanged } = diff(data, target));
      if (changes.length === 0) {
        // Someone else already set every value we wanted.
        return { ...base, changes: [], unchanged, version, libraryVersion: version, reapplied: round };
      }
    }
  }
}

function conflictError(
  deps: Deps,
  key: string,
  theirs: FieldChange[],
  data: Record<string, unknown>,
): ZoteusError {
  const names = theirs.map((c) => c.field);
  const described = theirs
    .map(
      (c) =>
        `${c.field} (was ${show(c.from)}, now ${show(text(data[c.field]))}, you asked for ${show(c.to)})`,
    )
    .join('; ');
  return new ZoteusError(
    'conflict',
    `Item ${key} was changed by someone else after it was read, in the field${names.length === 1 ? '' : 's'} being updated: ${described}. Nothing was written.`,
    {
      status: 412,
      retryable: false,
      field: names[0],
      failed: theirs.map((c, index) => ({
        index,
        key,
        field: c.field,
        code: 412,
        message: `${c.field} was changed by someone else to ${show(text(data[c.field]))}`,
        reason: 'conflict',
      })),
      hint: `Look at the item as it is now (${toolRef('zotero_get_item', { item_key: key })}), decide which value to keep, then update it again.`,
    },
  );
}
