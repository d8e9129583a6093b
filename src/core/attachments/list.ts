/**
 * An item's attachments as `zotero_get_attachment` lists them: link mode, content type, file
 * name, size, MD5, and where the file is: in the desktop's `storage/<KEY>/` (or a linked file's
 * path) on this computer, and whether the cloud holds it (Zotero's synced hash says so).
 */
import { statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { answered, itemNotFound, lookUpKeys, openReader, type Answered } from '../items/read/common.js';
import type { LibraryArgs } from '../library/address.js';
import type { WebApiItem } from '../library/port.js';
import type { LibraryRoute } from '../library/router.js';
import type { Deps } from '../tool.js';

export const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export interface AttachmentEntry {
  key: string;
  title: string;
  linkMode: string;
  contentType: string | null;
  filename: string | null;
  /** Bytes of the file on this computer, when it is here. */
  size: number | null;
  /** Zotero's MD5 of the stored file (the synced hash), when it has one. */
  md5: string | null;
  /** The file is on this computer (storage folder, or a linked file's path). */
  local: boolean;
  /** Where it is on this computer. */
  localPath?: string;
  /** Zotero's cloud holds the file (a stored file with a synced hash); false for linked files and URLs. */
  inCloud: boolean;
}

/** The data directory whose `storage/` may hold the library's files (the desktop's, when found). */
export async function dataDirOf(deps: Deps, route: LibraryRoute): Promise<string | undefined> {
  if (route.backend !== 'web') {
    const { desktop } = await import('../library/readers/desktop.js');
    const reader = (await (await desktop(deps)).state()).sqlite.reader;
    if (reader) return reader.dataDir;
  }
  const { discoverZoteroDataDir } = await import('../local/index.js');
  return discoverZoteroDataDir({ env: deps.env, config: deps.config }).dataDir;
}

const isFile = (path: string): boolean => {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

/** The file's name: JSON `filename`, else a stored `path` (`storage:<name>`). */
function filenameOf(att: WebApiItem): string | null {
  const path = str(att.data.path);
  return str(att.data.filename) ?? (path?.startsWith('storage:') ? path.slice('storage:'.length) : null);
}

/** Where the attachment's file is on this computer, when it is. */
export function localPathOf(dataDir: string | undefined, att: WebApiItem): string | undefined {
  const linkMode = str(att.data.linkMode);
  if (linkMode === 'linked_url') return undefined;
  const path = str(att.data.path);
  if (linkMode === 'linked_file') return path && isAbsolute(path) && isFile(path) ? path : undefined;
  const filename = filenameOf(att);
  if (!dataDir || !filename || filename.includes('/') || filename.includes('\\')) return undefined;
  const candidate = join(dataDir, 'storage', att.key, filename);
  return isFile(candidate) ? candidate : undefined;
}

export function describeAttachment(dataDir: string | undefined, att: WebApiItem): AttachmentEntry {
  const linkMode = str(att.data.linkMode) ?? 'imported_file';
  const localPath = localPathOf(dataDir, att);
  const md5 = str(att.data.md5);
  const stored = linkMode === 'imported_file' || linkMode === 'imported_url' || linkMode === 'embedded_image';
  return {
    key: att.key,
    title: str(att.data.title) ?? '',
    linkMode,
    contentType: str(att.data.contentType),
    filename: filenameOf(att),
    size: localPath ? statSync(localPath).size : num(att.data.filesize),
    md5,
    local: localPath !== undefined,
    ...(localPath ? { localPath } : {}),
    inCloud: stored && md5 !== null,
  };
}

export interface ListAttachmentsInput extends LibraryArgs {
  item_key: string;
}

export interface ListedAttachments extends Answered {
  item: WebApiItem;
  /** The item's attachments (the item itself when it is one), in Zotero's order. */
  attachments: WebApiItem[];
  entries: AttachmentEntry[];
  dataDir: string | undefined;
}

/** The item (or the attachment named) and its attachments; not_found when the key names nothing. */
export async function listAttachments(deps: Deps, input: ListAttachmentsInput): Promise<ListedAttachments> {
  // As every read: a string of no key's form, or a key of nothing, is not_found naming the
  // library (and another library of this computer that holds it).
  return lookUpKeys(deps, input, { keys: [input.item_key], field: 'item_key' }, () => listOf(deps, input));
}

async function listOf(deps: Deps, input: ListAttachmentsInput): Promise<ListedAttachments> {
  const { reader, route } = await openReader(deps, input);
  const item = await reader.item(input.item_key);
  if (!item) throw itemNotFound(deps, [input.item_key], route.library);
  const attachments =
    item.data.itemType === 'attachment'
      ? [item]
      : (await reader.children(item.key)).filter((c) => c.data.itemType === 'attachment');
  const dataDir = await dataDirOf(deps, route);
  return {
    item,
    attachments,
    entries: attachments.map((a) => describeAttachment(dataDir, a)),
    dataDir,
    ...answered(route),
  };
}
