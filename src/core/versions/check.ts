/** The offline checks of an update-status call (light: the declaration loads it). */
import { ZoteusError } from '../errors.js';

export interface UpdateStatusScope {
  item_keys?: string[] | undefined;
  collection_key?: string | undefined;
  all?: boolean | undefined;
  apply?: boolean | undefined;
  plan_id?: string | undefined;
}

function scopeCount(input: UpdateStatusScope): string[] {
  return [
    input.item_keys?.length ? 'item_keys' : undefined,
    input.collection_key !== undefined ? 'collection_key' : undefined,
    input.all ? 'all' : undefined,
  ].filter((w): w is string => w !== undefined);
}

/** Offline checks: one scope (none with a plan), a plan only with apply. */
export function checkUpdateStatus(input: UpdateStatusScope): void {
  const ways = scopeCount(input);
  if (input.plan_id !== undefined) {
    if (input.apply !== true)
      throw new ZoteusError('validation_error', 'A plan id is for applying: give apply with it.', {
        field: 'plan_id',
      });
    if (ways.length)
      throw new ZoteusError(
        'validation_error',
        `A plan holds its own items: give the plan id without ${ways.join(' or ')}.`,
        { field: ways[0] as string },
      );
    return;
  }
  if (ways.length === 0)
    throw new ZoteusError('validation_error', 'Nothing to check: give item keys, a collection, or all.', {
      field: 'item_keys',
    });
  if (ways.length > 1)
    throw new ZoteusError(
      'validation_error',
      `Give one of item keys, a collection or all, not ${ways.join(' and ')}.`,
      { field: ways[1] as string },
    );
}
