/**
 * The bulk-write threshold (ZOTEUS_CONFIRM_BULK_WRITES=N, 0 is off): a call that removes more
 * than N items at once needs `confirm: true`. The pipeline checks it offline before anything
 * else; a change whose size is known only after a read (deleting a tag from every item that
 * has it) checks it then, with the same words.
 */
import type { Config } from '../config.js';
import { ZoteusError } from '../errors.js';
import type { Deps } from '../tool.js';
import { paramRef } from './refs.js';

export interface BulkChange {
  count: number;
  /** What the call does, count included, as the start of a sentence: "Removing 12 items from collection ABCD2345". */
  what: string;
  /** The verb of the hint: "remove at most 10 items per call" (default "act on"). */
  verb?: string;
}

/** "1 item", "12 items". */
export function items(n: number): string {
  return `${n} item${n === 1 ? '' : 's'}`;
}

/** The refusal, or undefined when the change is under the threshold or confirmed. */
export function bulkRefusal(
  config: Pick<Config, 'confirmBulkWrites'>,
  change: BulkChange,
  confirmed: boolean | undefined,
  /** How the caller confirms, as the start of a sentence: "Run it again with --confirm". */
  how: string,
): ZoteusError | undefined {
  const threshold = config.confirmBulkWrites;
  if (threshold <= 0 || change.count <= threshold || confirmed === true) return undefined;
  return new ZoteusError(
    'confirmation_required',
    `${change.what} in one call needs confirmation: the bulk-write threshold (ZOTEUS_CONFIRM_BULK_WRITES) is ${items(threshold)}. Nothing was changed.`,
    {
      field: 'confirm',
      hint: `${how} to proceed, or ${change.verb ?? 'act on'} at most ${items(threshold)} per call.`,
    },
  );
}

/** The threshold for a change whose size a read found, in the words of the caller's surface. */
export function assertBulkConfirmed(
  deps: Pick<Deps, 'config' | 'surface'>,
  change: BulkChange,
  confirmed: boolean | undefined,
): void {
  const how = `Call again with ${paramRef('confirm', 'true')}`;
  const refused = bulkRefusal(deps.config, change, confirmed, how);
  if (refused) throw refused;
}
