/**
 * The offline checks of a merge, light enough for the declaration to load: an item merged
 * with itself, a plan without apply.
 */
import { paramRef } from '../call/refs.js';
import { ZoteusError } from '../errors.js';

export interface MergeScope {
  master_key: string;
  item_keys: readonly string[];
  apply?: boolean | undefined;
  plan_id?: string | undefined;
}

export function checkMerge(input: MergeScope): void {
  if (input.item_keys.includes(input.master_key)) {
    throw new ZoteusError(
      'validation_error',
      `An item cannot be merged with itself: ${input.master_key} is the master and one of the items to merge into it.`,
      { field: 'item_keys', hint: 'Name the master once, then the other items.' },
    );
  }
  if (input.plan_id !== undefined && input.apply !== true) {
    throw new ZoteusError('validation_error', 'A plan is applied only with apply.', {
      field: 'plan_id',
      hint: `Add ${paramRef('apply')} to write the plan, or leave out ${paramRef('plan_id')} for a new preview.`,
    });
  }
}
