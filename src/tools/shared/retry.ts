/**
 * How the previewed metadata batches (update-status, enrich) retry only what failed under the
 * same idempotency key: a plan is retried whole (what landed reads as unchanged); a scope (keys,
 * a collection, the library) becomes the failed keys alone. The retry's rows replace the earlier
 * rows of the same keys; the counts of what was checked stay the first call's.
 */
interface Scoped {
  plan_id?: string | undefined;
  item_keys?: string[] | undefined;
  collection_key?: string | undefined;
  all?: boolean | undefined;
}

interface Landed {
  failed: Array<{ key?: string | undefined }>;
  succeeded: string[];
  unchanged: string[];
}

type Rows<O> = { [K in keyof O]: O[K] extends Array<{ key: string }> ? K : never }[keyof O];

/** The input that retries the failed entries of `previous`; null when none failed. */
export function retryFailedKeys<I extends Scoped>(input: I, previous: Landed): I | null {
  const keys = previous.failed.flatMap((f) => (f.key ? [f.key] : []));
  if (keys.length === 0) return null;
  if (input.plan_id !== undefined) return input;
  return { ...input, item_keys: keys, collection_key: undefined, all: undefined };
}

/** The retry merged into the earlier answer: `rows` by key, `counts` as first reported. */
export function mergeRetry<O extends Landed>(
  previous: O,
  retry: O,
  rows: readonly Rows<O>[],
  counts: readonly (keyof O)[],
): O {
  const rowsOf = (out: O, field: Rows<O>) => out[field] as unknown as Array<{ key: string }>;
  const again = new Set(rows.flatMap((field) => rowsOf(retry, field).map((r) => r.key)));
  const merged: O = {
    ...retry,
    succeeded: [...new Set([...previous.succeeded, ...retry.succeeded])],
    unchanged: [...new Set([...previous.unchanged, ...retry.unchanged])].filter(
      (k) => !previous.succeeded.includes(k),
    ),
  };
  for (const field of counts) merged[field] = previous[field];
  for (const field of rows) {
    (merged as Record<Rows<O>, unknown>)[field] = [
      ...rowsOf(previous, field).filter((r) => !again.has(r.key)),
      ...rowsOf(retry, field),
    ];
  }
  return merged;
}
