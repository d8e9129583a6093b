/**
 * `zot attach KEY --file PATH --link` / `zotero_attach_file` with `link: true`: each file becomes
 * a `linked_file` attachment under `parent_item` that points at the file where it is (its
 * absolute `path`), with its content type from the bytes and the name. Nothing is uploaded:
 * `linked_file` takes no upload anywhere (`zotero/file-uploads.md`), and Zotero opens the file
 * from that path. Zotero keeps linked files only in the user's own library, so a group is
 * refused before anything is sent (attach-plan.ts `checkLinkInput`). The item goes to whichever
 * side takes the library's writes (write-route.ts): the desktop's local API, or the Web API,
 * which keeps the link for the desktops that sync it. The creates are keyed by each file's path
 * (`writes/create.ts`), so a retry with the same idempotency key finds its items.
 */
import { ZoteusError, type ErrorCode } from '../errors.js';
import { webClient } from '../library/keys.js';
import { openWebLibrary } from '../library/web.js';
import type { Deps } from '../tool.js';
import { createObjects } from '../writes/index.js';
import { readLocalFile } from './local-file.js';
import { checkAttachInput, type AttachFileInput, type AttachFileOutput } from './attach-plan.js';

interface LinkedSource {
  file: string;
  path: string;
  filename: string;
  size: number;
  md5: string;
  contentType: string;
}

async function linkedSources(input: AttachFileInput): Promise<LinkedSource[]> {
  const out: LinkedSource[] = [];
  for (const file of input.path ?? []) {
    const { path, filename, size, md5, contentType } = await readLocalFile(
      file,
      '; a link points at a file that exists',
    );
    out.push({ file, path, filename, size, md5, contentType });
  }
  return out;
}

export async function linkFiles(deps: Deps, input: AttachFileInput): Promise<AttachFileOutput> {
  checkAttachInput(deps, input);
  const list = await linkedSources(input);
  const call = (await webClient(deps)).newCall();
  const lib = await openWebLibrary(deps, input, { access: 'write', call });
  if (lib.ref.type === 'group') {
    // checkLinkInput refused a group by its address; a library resolved to one otherwise.
    throw new ZoteusError(
      'validation_error',
      'Zotero keeps linked files only in your own library ("My Library"): nothing was attached.',
      { field: 'link' },
    );
  }
  const parent = (await lib.client.getByKeys(lib.prefix, 'items', [input.parent_item], { call })).byKey.get(
    input.parent_item,
  );
  if (!parent) {
    throw new ZoteusError(
      'not_found',
      `The parent item ${input.parent_item} does not exist in library ${lib.prefix}: nothing was attached.`,
      { field: 'parent_item' },
    );
  }
  const type = parent.data.itemType;
  if (type === 'note' || type === 'annotation' || type === 'attachment') {
    throw new ZoteusError(
      'validation_error',
      `${input.parent_item} is ${type === 'attachment' ? 'an attachment' : type === 'note' ? 'a note' : 'an annotation'}: a linked file goes under a regular item.`,
      { field: 'parent_item' },
    );
  }
  const seen = new Map<string, number>();
  const labels = list.map((s) => {
    const n = seen.get(s.path) ?? 0;
    seen.set(s.path, n + 1);
    return `link/${s.path}#${n}`;
  });
  const result = await createObjects(lib.client, {
    library: lib.prefix,
    kind: 'items',
    objects: list.map((s) => ({
      itemType: 'attachment',
      linkMode: 'linked_file',
      parentItem: input.parent_item,
      title: input.title ?? s.filename,
      path: s.path,
      contentType: s.contentType,
      tags: [],
      relations: {},
    })),
    labels,
    ids: deps.writeIds,
    call,
  });
  const out: AttachFileOutput = { parentItem: input.parent_item, succeeded: [], failed: [] };
  for (const made of [...result.successful].sort((a, b) => a.index - b.index)) {
    const s = list[made.index] as LinkedSource;
    out.succeeded.push({
      file: s.file,
      key: made.key,
      filename: s.filename,
      title: input.title ?? s.filename,
      contentType: s.contentType,
      size: s.size,
      md5: s.md5,
      upload: 'linked',
      path: s.path,
    });
  }
  for (const f of result.failed) {
    const s = list[f.index] as LinkedSource;
    out.failed.push({
      index: f.index,
      file: s.file,
      code: f.code,
      reason: f.reason as ErrorCode,
      message: `Zotero refused the linked-file attachment (HTTP ${f.code}): ${f.message}`,
    });
  }
  out.failed.sort((a, b) => a.index - b.index);
  if (result.libraryVersion !== undefined) out.libraryVersion = result.libraryVersion;
  return out;
}
