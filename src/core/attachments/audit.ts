/**
 * `zotero_attachment_audit`: the whole library's attachment files checked in one pass: stored
 * files missing on this computer, files missing in the cloud (no synced hash), files whose
 * bytes differ from Zotero's hash, and regular items without any PDF. The file's mtime equal
 * to Zotero's recorded one is taken as unchanged (as Zotero's own sync does); any other file
 * is hashed, streamed from disk. Each list is bounded; the counts are always whole.
 */
import { statSync } from 'node:fs';
import { jsonBytes, ROWS_BUDGET } from '../items/read/bounds.js';
import { answered, openReader, type Answered } from '../items/read/common.js';
import type { LibraryArgs } from '../library/address.js';
import type { WebApiItem } from '../library/port.js';
import type { Deps } from '../tool.js';
import { dataDirOf, localPathOf, str } from './list.js';
import { md5OfFile } from './local-file.js';

export const DEFAULT_AUDIT_LIMIT = 100;

export interface AuditInput extends LibraryArgs {
  limit?: number | undefined;
}

export interface AuditEntry {
  key: string;
  parentItem: string | null;
  filename: string | null;
  contentType: string | null;
  /** md5Differs: the MD5 of the file on this computer. */
  localMd5?: string;
  md5?: string | null;
}

export interface ItemEntry {
  key: string;
  itemType: string;
  title: string;
}

export interface AuditOutput extends Answered {
  attachments: number;
  storedFiles: number;
  counts: { missingLocally: number; missingInCloud: number; md5Differs: number; itemsWithoutPdf: number };
  missingLocally: AuditEntry[];
  missingInCloud: AuditEntry[];
  md5Differs: AuditEntry[];
  itemsWithoutPdf: ItemEntry[];
  /** Files hashed (the others had Zotero's recorded mtime). */
  hashed: number;
  truncated?: boolean;
  dataDir: string | null;
  message?: string;
}

const STORED = new Set(['imported_file', 'imported_url', 'embedded_image']);
const NOT_REGULAR = new Set(['note', 'attachment', 'annotation']);

function entry(att: WebApiItem): AuditEntry {
  return {
    key: att.key,
    parentItem: str(att.data.parentItem),
    filename: str(att.data.filename) ?? str(att.data.path)?.replace(/^storage:/, '') ?? null,
    contentType: str(att.data.contentType),
  };
}

export async function attachmentAudit(deps: Deps, input: AuditInput): Promise<AuditOutput> {
  const limit = input.limit ?? DEFAULT_AUDIT_LIMIT;
  const { reader, route } = await openReader(deps, input);
  const [{ items: attachments }, { items: top }] = await Promise.all([
    reader.items({ itemType: 'attachment' }),
    reader.items({ top: true }),
  ]);
  const dataDir = await dataDirOf(deps, route);
  const missingLocally: AuditEntry[] = [];
  const missingInCloud: AuditEntry[] = [];
  const md5Differs: AuditEntry[] = [];
  const withPdf = new Set<string>();
  let storedFiles = 0;
  let hashed = 0;
  for (const att of attachments) {
    const linkMode = str(att.data.linkMode) ?? 'imported_file';
    const isPdf = (str(att.data.contentType) ?? '').toLowerCase() === 'application/pdf';
    if (isPdf && linkMode !== 'linked_url') withPdf.add(str(att.data.parentItem) ?? att.key);
    if (!STORED.has(linkMode)) continue;
    storedFiles++;
    const md5 = str(att.data.md5);
    const path = localPathOf(dataDir, att);
    if (md5 === null) missingInCloud.push(entry(att));
    if (path === undefined) {
      missingLocally.push(entry(att));
      continue;
    }
    if (md5 === null) continue;
    const mtime = typeof att.data.mtime === 'number' ? att.data.mtime : null;
    if (mtime !== null && Math.floor(statSync(path).mtimeMs) === mtime) continue;
    hashed++;
    // Streamed: an edited file of any size (readFileSync stops at 2 GiB) is never held whole.
    const localMd5 = await md5OfFile(path);
    if (localMd5 !== md5.toLowerCase()) md5Differs.push({ ...entry(att), md5, localMd5 });
  }
  const itemsWithoutPdf: ItemEntry[] = top
    .filter((i) => !NOT_REGULAR.has(String(i.data.itemType)) && !withPdf.has(i.key))
    .map((i) => ({ key: i.key, itemType: String(i.data.itemType), title: str(i.data.title) ?? '' }));
  const counts = {
    missingLocally: missingLocally.length,
    missingInCloud: missingInCloud.length,
    md5Differs: md5Differs.length,
    itemsWithoutPdf: itemsWithoutPdf.length,
  };
  // One entry of each list in turn, up to limit each, while the answer's size bound allows.
  const lists = [missingLocally, missingInCloud, md5Differs, itemsWithoutPdf] as const;
  const kept = lists.map(() => 0);
  let budget = ROWS_BUDGET;
  for (let i = 0, more = true; i < limit && more; i++) {
    more = false;
    lists.forEach((list, n) => {
      const next = list[i];
      if (next === undefined || budget <= 0) return;
      budget -= jsonBytes(next) + 1;
      if (budget < 0) return;
      kept[n] = i + 1;
      more = true;
    });
  }
  const cut = lists.some((list, n) => list.length > kept[n]!);
  const out: AuditOutput = {
    ...answered(route),
    attachments: attachments.length,
    storedFiles,
    counts,
    missingLocally: missingLocally.slice(0, kept[0]),
    missingInCloud: missingInCloud.slice(0, kept[1]),
    md5Differs: md5Differs.slice(0, kept[2]),
    itemsWithoutPdf: itemsWithoutPdf.slice(0, kept[3]),
    hashed,
    dataDir: dataDir ?? null,
  };
  if (cut) {
    out.truncated = true;
    out.message = `The lists hold their first entries (at most ${limit} each, and about 40 KB in all); counts has the whole numbers.`;
  }
  if (!dataDir) {
    out.message = `${out.message ? `${out.message} ` : ''}No Zotero data directory on this computer: every stored file counts as missing locally.`;
  }
  return out;
}
