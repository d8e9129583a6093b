/**
 * The `zotero` engine of `zotero_export` (issue 17, deliverable 5): Zotero's own translators
 * write the file, through the Web API or the desktop's local API (`format=bibtex|biblatex|ris|
 * csljson` on an item listing, `citations.md`), citation keys included (Zotero's, unique within
 * each request). zotero.sqlite has no translators: see `openZoteroRenderer`.
 *
 * Requests:
 * - by key: the items' data first (one request per 50 keys: which keys name no item, which are
 *   notes or attachments, as the local engine reports them), then one export per 50 items;
 * - a collection or the library: its item keys in one `format=keys` request (the page asked for,
 *   or every key when saving), then the export in pages of 100 in the same order (notes and
 *   attachments left out by `itemType`), each checked to be read at the same library version.
 *
 * Bounded as the local engine's answer: whole requests while the text fits the rows budget; a
 * request whose text would overrun it is asked again for fewer items (in proportion), so the
 * answer ends on an item boundary without parsing Zotero's text. Saved, it streams page by page.
 */
import { nothingUsable } from '../items/read/entries.js';
import { ZoteusError } from '../errors.js';
import { paramRef } from '../call/refs.js';
import { jsonBytes, ROWS_BUDGET } from '../items/read/bounds.js';
import { answered } from '../items/read/common.js';
import type { ItemQuery } from '../library/port.js';
import type { Deps } from '../tool.js';
import { BATCH_SIZE, chunk, PAGE_LIMIT } from '../zotero/index.js';
import type { FailedEntry } from '../zotero/types.js';
import { openZoteroRenderer, zoteroRefusal } from '../citations/zotero-engine.js';
import {
  EXPORT_DEFAULT_LIMIT,
  EXPORT_MAX_LIMIT,
  itemsByKey,
  type ExportFormat,
  type ExportInput,
  type ExportOutput,
  type SaveText,
} from './export.js';

/** One request's worth of items: keys (`itemKey`), or a range of the listing from `start`. */
interface Unit {
  keys: string[];
  start?: number;
}

/** Joins the texts of several requests into one file of the format. */
class Joiner {
  private any = false;
  constructor(private readonly format: ExportFormat) {}

  get header(): string {
    return this.format === 'csljson' ? '[\n' : '';
  }

  /** The text to write for one request's answer. */
  part(text: string): string {
    if (this.format === 'csljson') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text) as unknown;
      } catch {
        throw new ZoteusError('api_error', 'Zotero’s CSL-JSON export was not JSON.');
      }
      // The Web API wraps the items ({"items": […]}), the desktop writes the array.
      const items = Array.isArray(parsed) ? parsed : (parsed as { items?: unknown } | null)?.items;
      if (!Array.isArray(items))
        throw new ZoteusError('api_error', 'Zotero’s CSL-JSON export held no items.');
      return items
        .map((item) => {
          const out = `${this.any ? ',\n' : ''}${JSON.stringify(item, null, 2).replace(/^/gm, '  ')}`;
          this.any = true;
          return out;
        })
        .join('');
    }
    const ris = this.format === 'ris';
    const body = ris ? text.replace(/^[\r\n]+|[\r\n]+$/g, '') : text.trim();
    if (body === '') return '';
    const out = `${this.any ? (ris ? '\r\n\r\n' : '\n\n') : ''}${body}`;
    this.any = true;
    return out;
  }

  get footer(): string {
    if (this.format === 'csljson') return '\n]\n';
    if (!this.any) return '';
    return this.format === 'ris' ? '\r\n' : '\n';
  }
}

export async function exportWithZotero(
  deps: Deps,
  input: ExportInput,
  format: ExportFormat,
  save?: SaveText,
): Promise<ExportOutput> {
  if (input.charset !== undefined) {
    throw new ZoteusError(
      'validation_error',
      `charset is the local engine's: Zotero's ${format} translator writes the characters its own way.`,
      { field: 'charset', hint: `Leave out charset, or use ${paramRef('engine', 'local')}.` },
    );
  }
  const { api, reader, route } = await openZoteroRenderer(deps, input);
  const listing: ItemQuery | undefined = input.item_keys?.length
    ? undefined
    : {
        top: true,
        sort: 'dateAdded',
        direction: 'asc',
        // What has no entry of its own stays out of the keys and of the export alike.
        itemType: ['-attachment', '-note'],
        ...(input.collection_key !== undefined ? { collectionKey: input.collection_key } : {}),
      };
  const saving = input.save_path !== undefined;
  if (saving && !save)
    throw new ZoteusError('internal_error', 'Internal error in Zoteus (an export to save without a saver).');

  let units: Unit[];
  let failed: FailedEntry[] = [];
  let totalResults: number | undefined;
  let version: number | undefined;
  const start = input.start ?? 0;
  const limit = Math.min(input.limit ?? EXPORT_DEFAULT_LIMIT, EXPORT_MAX_LIMIT);
  if (!listing) {
    const found = await itemsByKey(reader, input.item_keys ?? [], route.library);
    failed = found.failed;
    if (found.items.length === 0) throw await nothingUsable(deps, failed, route.library);
    units = chunk(
      found.items.map((i) => i.key),
      BATCH_SIZE,
    ).map((keys) => ({ keys }));
  } else {
    const range = saving ? {} : { start, limit };
    const answer = await api.listItems({ ...listing, ...range }, { format: 'keys' });
    const keys = answer.text.split('\n').filter((k) => k.trim() !== '');
    totalResults = answer.totalResults ?? (saving ? 0 : start) + keys.length;
    version = answer.lastModifiedVersion;
    const from = saving ? 0 : start;
    units = chunk(keys, PAGE_LIMIT).map((part, i) => ({ keys: part, start: from + i * PAGE_LIMIT }));
  }

  const fetchUnit = async (unit: Unit): Promise<string> => {
    const query: ItemQuery =
      unit.start === undefined
        ? {
            keys: unit.keys,
            includeTrashed: true,
            sort: 'dateAdded',
            direction: 'asc',
            limit: unit.keys.length,
          }
        : { ...(listing as ItemQuery), start: unit.start, limit: unit.keys.length };
    let answer;
    try {
      answer = await api.listItems(query, { format });
    } catch (error) {
      throw zoteroRefusal(error, {});
    }
    if (
      unit.start !== undefined &&
      version !== undefined &&
      answer.lastModifiedVersion !== undefined &&
      answer.lastModifiedVersion !== version
    ) {
      throw new ZoteusError(
        'conflict',
        `The library changed while Zotero exported it (version ${version}, then ${answer.lastModifiedVersion}): the pages no longer match. Run the export again.`,
        { retryable: true },
      );
    }
    return answer.text;
  };

  const base = { engine: 'zotero' as const, format, failed, ...answered(route) };
  const joiner = new Joiner(format);

  if (saving) {
    const exported: string[] = [];
    let bytes = 0;
    async function* chunks(): AsyncGenerator<string> {
      const emit = (text: string) => {
        bytes += Buffer.byteLength(text, 'utf8');
        return text;
      };
      const phase = 'export';
      const total = units.reduce((n, u) => n + u.keys.length, 0);
      deps.progress({ event: 'start', phase, done: 0, total });
      yield emit(joiner.header);
      for (const unit of units) {
        const part = joiner.part(await fetchUnit(unit));
        if (part) yield emit(part);
        exported.push(...unit.keys);
        deps.progress({ event: 'progress', phase, done: exported.length, total });
      }
      yield emit(joiner.footer);
      deps.progress({ event: 'complete', phase, done: exported.length, total });
    }
    const path = await (save as SaveText)(input.save_path as string, chunks());
    const shown = exported.slice(0, 1000);
    return {
      ...base,
      saved: { path, bytes },
      succeeded: shown,
      ...(totalResults !== undefined ? { totalResults } : {}),
      ...(exported.length > shown.length ? { truncated: true } : {}),
    };
  }

  // A bounded answer: whole requests while they fit; the first that does not is asked again for
  // as many items as should fit, and the answer ends there.
  const queue = [...units];
  const parts: string[] = [];
  const kept: string[] = [];
  let used = 0;
  let shrunk = false;
  while (queue.length > 0) {
    const unit = queue.shift() as Unit;
    const text = await fetchUnit(unit);
    const size = jsonBytes(text);
    const room = ROWS_BUDGET - used;
    if (size > room && (kept.length > 0 || unit.keys.length > 1)) {
      let fewer = Math.min(unit.keys.length - 1, Math.floor((unit.keys.length * room * 0.95) / size));
      if (kept.length === 0) fewer = Math.max(1, fewer);
      if (fewer < 1) {
        queue.unshift(unit);
        break;
      }
      queue.unshift(...split(unit, fewer));
      shrunk = true;
      continue;
    }
    // (One item over the budget on its own is kept: paging always moves on.)
    parts.push(text);
    kept.push(...unit.keys);
    used += size;
    if (shrunk) break;
  }
  const remaining = queue.flatMap((u) => u.keys);
  const text = joiner.header + parts.map((p) => joiner.part(p)).join('') + joiner.footer;
  const cut = remaining.length > 0;
  const end = start + kept.length;
  return {
    ...base,
    text,
    succeeded: kept,
    ...(totalResults !== undefined ? { totalResults } : {}),
    ...(listing && end < (totalResults ?? 0) && kept.length > 0 ? { nextStart: end } : {}),
    ...(cut ? { truncated: true } : {}),
    ...(cut && !listing ? { remaining } : {}),
  };
}

/** A unit as two: its first `n` items, then the rest. */
function split(unit: Unit, n: number): Unit[] {
  const head: Unit = { keys: unit.keys.slice(0, n) };
  const tail: Unit = { keys: unit.keys.slice(n) };
  if (unit.start !== undefined) {
    head.start = unit.start;
    tail.start = unit.start + n;
  }
  return [head, tail];
}
