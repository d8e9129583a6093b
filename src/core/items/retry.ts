/**
 * Idempotent retries (agent-interface.md, "--idempotency-key"): from an earlier partial
 * result, the input that retries only what failed, and the merge of the retry's result into
 * the earlier one. Pure and light, so tool declarations can import them at load time.
 */
import type { FailedEntry } from '../zotero/index.js';
import type { CreateOutput } from './create.js';
import type { ImportInput, ImportOutput } from './import.js';
import { entriesOf, serializeEntries } from './records.js';

/**
 * create: the whole input again, when anything failed (null when nothing did). Each item's key
 * follows from its input index, and a retry reads the keys back first, so the items that
 * landed are found, not sent again: only the failed ones are written.
 */
export function retryCreateInput<I extends { items: readonly unknown[] }>(
  input: I,
  previous: CreateOutput,
): I | null {
  return previous.failed.length === 0 ? null : input;
}

/** create: the retry covers every item, so its answer is the merged one. */
export function mergeCreate(previous: CreateOutput, retry: CreateOutput): CreateOutput {
  const merged: CreateOutput = { created: retry.created, failed: retry.failed };
  const version = retry.libraryVersion ?? previous.libraryVersion;
  if (version !== undefined) merged.libraryVersion = version;
  return merged;
}

/** import: only the entries that failed, written back in the input's own format. */
export function retryImportInput<I extends ImportInput>(input: I, previous: ImportOutput): I | null {
  const failedEntries = new Set(previous.failed.map((f) => f.entry));
  if (failedEntries.size === 0) return null;
  if (input.records !== undefined) {
    const { format, entries } = entriesOf(input);
    const again = entries.filter((e) => failedEntries.has(e.entry));
    if (again.length === 0 || format === undefined) return null;
    return { ...input, format, records: serializeEntries(format, again) };
  }
  if (input.identifiers !== undefined) {
    const again = input.identifiers.filter((line) => failedEntries.has(line.trim()));
    return again.length ? { ...input, identifiers: again } : null;
  }
  for (const list of ['isbn', 'url'] as const) {
    const given = input[list];
    if (given === undefined) continue;
    const again = given.filter((line) => failedEntries.has(line.trim()));
    return again.length ? { ...input, [list]: again } : null;
  }
  return input;
}

/** import: what landed then and now, what still fails. */
export function mergeImport(previous: ImportOutput, retry: ImportOutput): ImportOutput {
  const merged: ImportOutput = {
    succeeded: [...previous.succeeded, ...retry.succeeded],
    unchanged: [...previous.unchanged, ...retry.unchanged],
    failed: retry.failed,
    total: previous.total,
  };
  const version = retry.libraryVersion ?? previous.libraryVersion;
  if (version !== undefined) merged.libraryVersion = version;
  return merged;
}

/** Keys of failed entries, first occurrence order. */
export function failedKeys(failed: readonly FailedEntry[]): string[] {
  return [...new Set(failed.map((f) => f.key).filter((k): k is string => typeof k === 'string'))];
}

/** Object batches by key (tags, trash, delete): the retry's failures back at the original indexes. */
export function remapFailed(previous: readonly FailedEntry[], retry: readonly FailedEntry[]): FailedEntry[] {
  const byKey = new Map(previous.filter((f) => f.key !== undefined).map((f) => [f.key as string, f.index]));
  return retry.map((f) => ({ ...f, index: (f.key !== undefined ? byKey.get(f.key) : undefined) ?? f.index }));
}

/** Merges string-list fields (`updated`, `unchanged`, `deleted`) of two results without repeats. */
export function mergeLists(a: readonly string[] | undefined, b: readonly string[] | undefined): string[] {
  return [...new Set([...(a ?? []), ...(b ?? [])])];
}
