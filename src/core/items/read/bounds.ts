/**
 * How big one answer may be (conventions.md, "Bounded size"). An MCP result carries its output
 * twice, as `structuredContent` and as the JSON text copy in `content` (escaped once more), so
 * the rows of one answer are held to ROWS_BUDGET bytes of JSON: the whole message then stays
 * under MESSAGE_BOUND. A page that the budget cuts short of its `limit` says `truncated: true`
 * and `nextStart`; a long text is cut at `max_chars` and read on with `offset`.
 *
 * Light on purpose (no imports): the declarations use these numbers in their descriptions.
 */

/** The largest MCP message (JSON-RPC result, both copies of the output) an answer may make. */
export const MESSAGE_BOUND = 100_000;
/** Bytes of JSON the rows of one answer may take (about 10,000 tokens). */
export const ROWS_BUDGET = 40_000;
/** Entries of one list field of an item (creators, tags, …) that a search result or an item read keeps. */
export const ITEM_LIST_MAX = 100;

export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/**
 * The first rows whose JSON fits in `budget` bytes, at least one (so paging always moves on);
 * `cut` when rows were left out.
 */
export function fitRows<T>(rows: readonly T[], budget = ROWS_BUDGET): { rows: T[]; cut: boolean } {
  let used = 0;
  let n = 0;
  for (const row of rows) {
    const size = jsonBytes(row) + 1;
    if (n > 0 && used + size > budget) break;
    used += size;
    n++;
  }
  return { rows: n === rows.length ? [...rows] : rows.slice(0, n), cut: n < rows.length };
}

/** Where the next page starts, when rows follow this page; undefined at the end. */
export function nextStartOf(start: number, shown: number, total: number): number | undefined {
  return start + shown < total ? start + shown : undefined;
}

/** An end for `text.slice(from, end)` that does not split a surrogate pair. */
function safeEnd(text: string, end: number): number {
  if (end <= 0 || end >= text.length) return Math.max(0, Math.min(end, text.length));
  const code = text.charCodeAt(end - 1);
  return code >= 0xd800 && code <= 0xdbff ? end - 1 : end;
}

/**
 * The largest end, at most `end`, at which `text.slice(start, end)` takes at most `maxBytes`
 * bytes of UTF-8 (never splitting a surrogate pair).
 */
export function byteEnd(text: string, start: number, end: number, maxBytes: number): number {
  if (maxBytes === Infinity) return end;
  let e = end;
  // A few rounds, each scaled by how far over the bound the slice is.
  for (let bytes = Buffer.byteLength(text.slice(start, e), 'utf8'); bytes > maxBytes && e > start;) {
    const chars = Math.floor(((e - start) * maxBytes) / bytes) - 1;
    e = Math.max(start, safeEnd(text, start + Math.max(0, chars)));
    bytes = Buffer.byteLength(text.slice(start, e), 'utf8');
  }
  return e;
}

export interface Clipped {
  text: string;
  /** Offset of `text` in the whole text. */
  start: number;
  /** Where `text` ends in the whole text: the `offset` that reads on. */
  end: number;
  /** Length of the whole text. */
  totalChars: number;
  /** The whole text did not fit: some of it is before `start` or after `end`. */
  truncated: boolean;
}

/**
 * At most `maxChars` characters of `text` from `offset`, and at most `maxBytes` bytes of UTF-8
 * (a text of 40,000 CJK characters is 120 KB). A text within both is kept whole whatever the
 * offset (offset reads on in the long ones only).
 */
export function clipText(text: string, maxChars: number, offset = 0, maxBytes = Infinity): Clipped {
  if (text.length <= maxChars && (maxBytes === Infinity || Buffer.byteLength(text, 'utf8') <= maxBytes)) {
    return { text, start: 0, end: text.length, totalChars: text.length, truncated: false };
  }
  const start = safeEnd(text, Math.min(offset, text.length));
  const end = byteEnd(text, start, Math.max(start, safeEnd(text, start + maxChars)), maxBytes);
  return { text: text.slice(start, end), start, end, totalChars: text.length, truncated: true };
}

/** Characters a text field of an item keeps at least, whatever the byte bound. */
const MIN_FIELD_CHARS = 1_000;

/** One field of an item cut to keep an answer bounded. */
export interface FieldCut {
  /** The item (search results), absent for the item read itself. */
  key?: string;
  field: string;
  /** Its whole length: characters of a text, entries of a list. */
  length: number;
  /** Texts: the characters shown, as offsets into the whole text. */
  start?: number;
  end?: number;
}

/**
 * A copy of an item (Web API shape) whose text fields hold at most `maxChars` characters (from
 * `offset` for the long ones) and whose list fields at most ITEM_LIST_MAX entries, with what
 * was cut; when that is still more than `maxBytes` of JSON, the texts are cut shorter (to no
 * fewer than MIN_FIELD_CHARS). The item itself is not changed.
 */
export function boundItem<T extends { key: string; data: Record<string, unknown> }>(
  item: T,
  maxChars: number,
  offset = 0,
  maxBytes = Infinity,
): { item: T; cuts: FieldCut[] } {
  const first = cutFields(item, maxChars, offset);
  if (maxBytes === Infinity || jsonBytes(first.item) <= maxBytes) return first;
  // The largest cap that fits, by bisection (a few serializations of one item); never below
  // MIN_FIELD_CHARS, so a title or a date is never cut. It is found at offset 0, so it depends
  // only on the item and maxChars: a call with the same max_chars and the end a previous answer
  // gave as offset cuts the same fields and reads them on.
  let low = Math.min(MIN_FIELD_CHARS, maxChars);
  let high = maxChars;
  while (high - low > 50) {
    const mid = Math.floor((low + high) / 2);
    if (jsonBytes(cutFields(item, mid, 0).item) <= maxBytes) low = mid;
    else high = mid;
  }
  return cutFields(item, low, offset);
}

function cutFields<T extends { key: string; data: Record<string, unknown> }>(
  item: T,
  maxChars: number,
  offset: number,
): { item: T; cuts: FieldCut[] } {
  const cuts: FieldCut[] = [];
  let data: Record<string, unknown> | undefined;
  for (const [field, value] of Object.entries(item.data)) {
    if (typeof value === 'string' && value.length > maxChars) {
      const c = clipText(value, maxChars, offset);
      (data ??= { ...item.data })[field] = c.text;
      cuts.push({ field, length: c.totalChars, start: c.start, end: c.end });
    } else if (Array.isArray(value) && value.length > ITEM_LIST_MAX) {
      (data ??= { ...item.data })[field] = value.slice(0, ITEM_LIST_MAX);
      cuts.push({ field, length: value.length });
    }
  }
  return { item: data ? { ...item, data } : item, cuts };
}

/** Keys a batch's answer lists in succeeded/unchanged at most (its counts stay exact elsewhere). */
export const KEY_LIST_MAX = 1000;

/** A previewed batch's answer (update-status, enrich): its rows, the misses, the failures, the keys. */
export interface PlanAnswerLists<R> {
  rows: R[];
  unmatched: unknown[];
  failed: unknown[];
  succeeded: string[];
  unchanged: string[];
}

/**
 * The lists of a previewed batch's answer within the rows budget: its rows first (up to 60%),
 * then the misses (up to 80% with the rows), then the failures; keys at most KEY_LIST_MAX. The
 * totals, when a list was cut, say how many there are in all (the plan holds every row).
 */
function fitPlanAnswer<R>(lists: PlanAnswerLists<R>): PlanAnswerLists<R> & {
  totals?: { rows: number; unmatched: number; failed?: number };
} {
  const rows = fitRows(lists.rows, Math.floor(ROWS_BUDGET * 0.6));
  const unmatched = fitRows(lists.unmatched, Math.floor(ROWS_BUDGET * 0.8) - jsonBytes(rows.rows));
  const failed = fitRows(lists.failed, ROWS_BUDGET - jsonBytes([rows.rows, unmatched.rows]));
  const cut = rows.cut || unmatched.cut || failed.cut;
  return {
    rows: rows.rows,
    unmatched: unmatched.rows,
    failed: failed.rows,
    succeeded: lists.succeeded.slice(0, KEY_LIST_MAX),
    unchanged: lists.unchanged.slice(0, KEY_LIST_MAX),
    ...(cut
      ? {
          totals: {
            rows: lists.rows.length,
            unmatched: lists.unmatched.length,
            ...(failed.cut ? { failed: lists.failed.length } : {}),
          },
        }
      : {}),
  };
}

/** What a previewed batch's answer holds besides its rows (update-status, enrich). */
interface PlanAnswer {
  unmatched: unknown[];
  failed: unknown[];
  succeeded: string[];
  unchanged: string[];
}

/**
 * A previewed batch's answer within the size bound (fitPlanAnswer): `rows` names its rows field
 * (`updates`, `enrichments`), `total` the field that counts them all when they were cut.
 * Returned as it is when everything fits.
 */
export function boundPlanAnswer<O extends PlanAnswer>(
  out: O,
  rows: keyof O & string,
  total: keyof O & string,
): O {
  const all = out[rows] as unknown[];
  const fit = fitPlanAnswer({
    rows: all,
    unmatched: out.unmatched,
    failed: out.failed,
    succeeded: out.succeeded,
    unchanged: out.unchanged,
  });
  if (
    !fit.totals &&
    fit.succeeded.length === out.succeeded.length &&
    fit.unchanged.length === out.unchanged.length
  )
    return out;
  return {
    ...out,
    [rows]: fit.rows,
    unmatched: fit.unmatched,
    failed: fit.failed,
    succeeded: fit.succeeded,
    unchanged: fit.unchanged,
    ...(fit.totals
      ? {
          [total]: fit.totals.rows,
          totalUnmatched: fit.totals.unmatched,
          ...(fit.totals.failed !== undefined ? { totalFailed: fit.totals.failed } : {}),
          truncated: true,
        }
      : {}),
  };
}
