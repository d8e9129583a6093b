/**
 * `zotero://files/{path}`: a file the caller saved on a shared deployment (an evidence table,
 * an export, a downloaded attachment, a .bib), read back from the caller's own folder
 * (Deps.fileRoot), since a remote client cannot read the server's disk. Another caller asking
 * the same URI reads their own folder. Confined as saves are: `..`, `~`, an absolute path and
 * a symlink that leads out of the folder are refused; Zoteus' own state kept there (plans,
 * the journal) is not served. Text comes back as text (at most ~100 KB), anything else as a
 * blob (at most MAX_RESOURCE_BYTES, whose base64 stays within the answer bound).
 */
import { defineResourceTemplate } from '../core/resource.js';
import type { ResourceContent } from '../core/resource.js';

/** The largest text file embedded: the ~100 KB answer bound of conventions.md. */
export const MAX_TEXT_RESOURCE_BYTES = 100_000;

const TEXT_TYPES = new Set([
  'application/x-bibtex',
  'application/x-research-info-systems',
  'application/json',
  'application/xml',
]);

export default defineResourceTemplate({
  uriTemplate: 'zotero://files/{path}',
  name: 'saved-file',
  title: 'A file you saved',
  description:
    'On a shared server: a file you saved there (save_path of an evidence table, an export or an attachment; write_bib), by its path in your own folder, as the save’s result names it. Text as text (up to 100,000 bytes), other files as a base64 blob (up to 75,000 bytes).',
  async read(deps, variables) {
    const { ZoteusError } = await import('../core/errors.js');
    const { isStateFile, resolveSavePath } = await import('../render/save.js');
    const { MAX_RESOURCE_BYTES } = await import('../core/attachments/download.js');
    const { contentTypeOf } = await import('../core/store/tenant-files.js');
    const raw = variables.path ?? '';
    const uri = `zotero://files/${raw}`;
    if (deps.fileRoot === undefined) {
      throw new ZoteusError(
        'not_found',
        `There is no ${uri}: saved files are served as resources only on a shared server; here a file is saved at the path given.`,
      );
    }
    const missing = () =>
      new ZoteusError('not_found', `You have no saved file ${raw}.`, {
        hint: 'Use the resource URI a save’s result names (saved.resource).',
      });
    const folder = () =>
      new ZoteusError('validation_error', `${raw} is a folder; name a file in it.`, { field: 'path' });
    const tooLarge = (size: number, max: number) =>
      new ZoteusError(
        'validation_error',
        `${raw} is ${size.toLocaleString('en-US')} bytes, more than a resource embeds (${max.toLocaleString('en-US')} bytes).`,
        { field: 'path', hint: 'Save a smaller file (fewer rows or items) and read that.' },
      );
    const MAX_ANY = Math.max(MAX_TEXT_RESOURCE_BYTES, MAX_RESOURCE_BYTES);
    const textualOf = (type: string | undefined) =>
      type === undefined ? undefined : type.startsWith('text/') || TEXT_TYPES.has(type);
    /** The file's bytes as the answer: text as text, anything else as a blob, each within its bound. */
    const contentOf = (bytes: Uint8Array, type: string | undefined): ResourceContent => {
      const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      // A type not known by its extension is text when it is UTF-8 without NUL.
      const text =
        textualOf(type) ??
        (!buffer.includes(0) && Buffer.from(buffer.toString('utf8'), 'utf8').equals(buffer));
      if (text) {
        if (buffer.byteLength > MAX_TEXT_RESOURCE_BYTES)
          throw tooLarge(buffer.byteLength, MAX_TEXT_RESOURCE_BYTES);
        return { mimeType: type ?? 'text/plain', text: buffer.toString('utf8') };
      }
      if (buffer.byteLength > MAX_RESOURCE_BYTES) throw tooLarge(buffer.byteLength, MAX_RESOURCE_BYTES);
      return { mimeType: type ?? 'application/octet-stream', bytes: new Uint8Array(buffer) };
    };
    // The same confinement as a save: refusals in the same words.
    const path = resolveSavePath(raw, { fileRoot: deps.fileRoot, env: deps.env, field: 'path' });

    if (deps.sharedState !== undefined) {
      // A tenant with a state database: the owner's row, whichever replica saved it.
      const { sqlTenantFileStore } = await import('../core/store/tenant-files.js');
      const { pathInFolder } = await import('../render/save.js');
      const store = sqlTenantFileStore(deps.sharedState.db, deps.sharedState.owner);
      const key = pathInFolder(deps.fileRoot, path);
      const info = await store.stat(key);
      if (info === undefined) throw missing();
      if (info.kind === 'folder') throw folder();
      const type = info.contentType ?? contentTypeOf(key);
      if (info.size > MAX_ANY) {
        throw tooLarge(info.size, textualOf(type) === false ? MAX_RESOURCE_BYTES : MAX_TEXT_RESOURCE_BYTES);
      }
      const bytes = await store.read(key);
      if (bytes === undefined) throw missing();
      return contentOf(bytes, type);
    }

    const { readFile, realpath, stat } = await import('node:fs/promises');
    const { isAbsolute, relative, sep } = await import('node:path');
    const root = await realpath(deps.fileRoot).catch(() => undefined);
    if (root === undefined) throw missing();
    const real = await realpath(path).catch(() => undefined);
    if (real === undefined) throw missing();
    const rel = relative(root, real);
    if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw new ZoteusError('permission_denied', `${raw} leads outside your own folder; it is not served.`, {
        field: 'path',
      });
    }
    if (isStateFile(rel)) throw missing();
    const info = await stat(real);
    if (info.isDirectory()) throw folder();
    const type = contentTypeOf(real);
    if (info.size > MAX_ANY) {
      throw tooLarge(info.size, textualOf(type) === false ? MAX_RESOURCE_BYTES : MAX_TEXT_RESOURCE_BYTES);
    }
    return contentOf(await readFile(real), type);
  },
});
