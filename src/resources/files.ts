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

/** The largest text file embedded: the ~100 KB answer bound of conventions.md. */
export const MAX_TEXT_RESOURCE_BYTES = 100_000;

const TYPES: Readonly<Record<string, string>> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  txt: 'text/plain',
  bib: 'application/x-bibtex',
  ris: 'application/x-research-info-systems',
  json: 'application/json',
  xml: 'application/xml',
  html: 'text/html',
  htm: 'text/html',
  tex: 'text/x-tex',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  epub: 'application/epub+zip',
  zip: 'application/zip',
};

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
    const { readFile, realpath, stat } = await import('node:fs/promises');
    const { extname, isAbsolute, relative, sep } = await import('node:path');
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
    // The same confinement as a save: refusals in the same words.
    const path = resolveSavePath(raw, { fileRoot: deps.fileRoot, env: deps.env, field: 'path' });
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
    if (info.isDirectory()) {
      throw new ZoteusError('validation_error', `${raw} is a folder; name a file in it.`, { field: 'path' });
    }
    const type = TYPES[extname(real).slice(1).toLowerCase()];
    const textual = type === undefined ? undefined : type.startsWith('text/') || TEXT_TYPES.has(type);
    const tooLarge = (max: number) =>
      new ZoteusError(
        'validation_error',
        `${raw} is ${info.size.toLocaleString('en-US')} bytes, more than a resource embeds (${max.toLocaleString('en-US')} bytes).`,
        { field: 'path', hint: 'Save a smaller file (fewer rows or items) and read that.' },
      );
    if (info.size > Math.max(MAX_TEXT_RESOURCE_BYTES, MAX_RESOURCE_BYTES)) {
      throw tooLarge(textual === false ? MAX_RESOURCE_BYTES : MAX_TEXT_RESOURCE_BYTES);
    }
    const bytes = await readFile(real);
    // A type not known by its extension is text when it is UTF-8 without NUL.
    const text = textual ?? (!bytes.includes(0) && Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes));
    if (text) {
      if (bytes.byteLength > MAX_TEXT_RESOURCE_BYTES) throw tooLarge(MAX_TEXT_RESOURCE_BYTES);
      return { mimeType: type ?? 'text/plain', text: bytes.toString('utf8') };
    }
    if (bytes.byteLength > MAX_RESOURCE_BYTES) throw tooLarge(MAX_RESOURCE_BYTES);
    return { mimeType: type ?? 'application/octet-stream', bytes: new Uint8Array(bytes) };
  },
});
