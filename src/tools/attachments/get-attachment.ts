/**
 * `zotero_get_attachment` / `zot attachment list KEY`, `zot attachment get KEY [--save PATH]`:
 * an item's attachments (link mode, content type, size, MD5, on this computer or only in the
 * cloud), and one attachment's file, read from this computer or downloaded from Zotero's cloud
 * storage, with its MD5 checked: text files as text, any file saved with save_path, a binary
 * file otherwise named by its MCP resource. Writes no library; with a save path it writes a
 * local file, hence tier `write` with `WRITES FILES` (available in read-only mode).
 */
import * as z from 'zod';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { answeredFields } from '../shared/output.js';
import { PROVENANCE, libraryParams, lookupKey } from '../shared/params.js';
import { onlyOn, paramRef } from '../../core/call/refs.js';

const ACTIONS = ['list', 'get'] as const;

const attachment = z.object({
  key: z.string(),
  title: z.string(),
  linkMode: z
    .string()
    .describe(
      'imported_file, imported_url (stored by Zotero), linked_file (a path on a computer), linked_url.',
    ),
  contentType: z.string().nullable(),
  filename: z.string().nullable(),
  size: z.number().int().nullable().describe('Bytes of the file, when it is on this computer.'),
  md5: z.string().nullable().describe('Zotero’s MD5 of the stored file (its synced hash), when it has one.'),
  local: z.boolean().describe('The file is on this computer.'),
  localPath: z.string().optional().describe('Where it is on this computer.'),
  inCloud: z.boolean().describe('Zotero’s cloud storage holds the file (a stored file with a synced hash).'),
});

export default defineTool({
  name: 'zotero_get_attachment',
  title: 'Attachment files',
  summary: 'List an item’s attachment files and where they are, or read or save one (MD5 checked).',
  description:
    "List an item's files or get one (no action: get for an attachment key, else list; get on an item takes its PDF first). Text files inline, max_chars from offset; other types as an MCP resource, or saved to save_path. Desktop data without a key, else Web API with ZOTERO_API_KEY. PDF text: zotero_get_fulltext.",
  tier: 'write',
  writesFilesOnly: true,
  openWorld: true,
  // The same file gives the same bytes; a repeated save rewrites them (overwrite) or is refused.
  idempotent: true,
  since: '0.2.0',
  toolset: 'files',
  cli: [
    {
      path: ['attachment', 'list'],
      args: ['item_key'],
      preset: { action: 'list' },
      omit: ['save_path', 'overwrite', 'max_chars', 'offset'],
      tier: 'read',
      summary: 'List an item’s attachment files: type, size, MD5, on this computer or only in the cloud.',
    },
    {
      path: ['attachment', 'get'],
      args: ['item_key'],
      preset: { action: 'get' },
      flags: { save_path: 'save' },
      summary:
        'Read an attachment’s file, here or from the cloud (text printed; --save PATH saves any file), its MD5 checked.',
    },
  ],
  input: z
    .object({
      item_key: lookupKey().describe(
        onlyOn('cli', 'An item’s key (its attachments) or an attachment’s key, e.g. "ABCD2345".'),
      ),
      action: z.enum(ACTIONS).optional(),
      save_path: z
        .string()
        .min(1)
        .optional()
        .describe(
          onlyOn(
            'cli',
            "get: save the file here (confined to the caller's own folder on a shared deployment).",
          ),
        ),
      overwrite: z
        .boolean()
        .optional()
        .describe(
          onlyOn('cli', `Allow ${paramRef('save_path')} to replace an existing file (default false).`),
        ),
      max_chars: z
        .number()
        .int()
        .min(100)
        .max(50_000)
        .optional()
        .meta({ default: 10_000 })
        .describe(onlyOn('cli', 'get, a text file: at most this many characters (default 10,000).')),
      offset: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe(onlyOn('cli', 'get, a text file: start at this character (the end of a previous answer).')),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    ...answeredFields,
    action: z.enum(ACTIONS),
    itemKey: z.string().describe('The item (or attachment) asked about.'),
    attachments: z
      .array(attachment)
      .optional()
      .describe('list: the attachments, in Zotero’s order (at most 200).'),
    totalResults: z.number().int().optional().describe('list: how many attachments the item has.'),
    attachment: attachment.optional().describe('get: the attachment whose file was read.'),
    file: z
      .object({
        key: z.string(),
        source: z
          .enum(['storage', 'linked', 'cloud'])
          .describe('The desktop’s storage folder, a linked file, or Zotero’s cloud storage (downloaded).'),
        path: z
          .string()
          .describe('The file on this computer, or the Web API path it is downloaded from (cloud).'),
        size: z
          .number()
          .int()
          .nullable()
          .describe('Bytes read; null when not read (a binary file in the cloud without save_path).'),
        md5: z.string().nullable().describe('The MD5 of the bytes read; null when not read.'),
        expectedMd5: z.string().nullable().describe('Zotero’s hash of the file, when it has one.'),
        md5Matches: z
          .boolean()
          .nullable()
          .describe('The bytes read have Zotero’s hash; null when it has none.'),
      })
      .optional(),
    text: z.string().optional().describe('get, a text file without save_path: its text (max_chars of it).'),
    start: z.number().int().optional(),
    end: z.number().int().optional().describe('Where the text shown ends: pass it as offset to read on.'),
    totalChars: z.number().int().optional(),
    truncated: z.boolean().optional().describe('The text goes on past end.'),
    saved: z
      .object({
        path: z.string(),
        bytes: z.number().int(),
        resource: z.string().optional().describe('On a shared server: the MCP resource that reads it back.'),
      })
      .optional()
      .describe('The file written, and its size in bytes.'),
    resource: z
      .object({ uri: z.string(), name: z.string(), mimeType: z.string() })
      .optional()
      .describe(
        'get, a binary file without save_path: the MCP resource that serves it (zotero://attachments/{library}/{key}).',
      ),
    message: z.string().optional(),
    provenance: z.string(),
  }),
  summarize: (out) => {
    if (out.action === 'list') {
      const list = out.attachments ?? [];
      const here = list.filter((a) => a.local).length;
      const cloud = list.filter((a) => !a.local && a.inCloud).length;
      return `${plural(out.totalResults ?? list.length, 'attachment')} of ${out.itemKey}: ${here} on this computer, ${cloud} only in the cloud.`;
    }
    const f = out.file;
    const check =
      f?.md5Matches === false ? ' (MD5 differs from Zotero’s)' : f?.md5Matches ? ' (MD5 checked)' : '';
    const from = f?.source === 'cloud' ? ' from Zotero’s cloud storage' : '';
    const size = f?.size === null || f?.size === undefined ? '' : `, ${plural(f.size, 'byte')}`;
    const what = `${out.attachment?.filename ?? f?.key ?? '?'}${size}${from}${check}`;
    if (out.saved) return `Saved ${what} to ${out.saved.path}.`;
    // A binary file in the cloud without a save path is not downloaded at all.
    const did = f?.md5 === null ? 'Not downloaded:' : 'Read';
    return `${did} ${what}.${out.message ? ` ${out.message}` : ''}`;
  },
  text: (out) => {
    if (out.action === 'get' && out.text !== undefined) return { document: out.text };
    if (out.action === 'get') return `${out.saved ? `Saved to ${out.saved.path}.` : (out.message ?? '')}\n`;
    const rows = (out.attachments ?? []).map(
      (a) =>
        `${a.key}  ${a.linkMode}  ${a.contentType ?? '-'}  ${a.size ?? '-'}  ${a.md5 ?? '-'}  ${a.local ? 'here' : a.inCloud ? 'cloud only' : 'missing'}  ${a.filename ?? a.title}`,
    );
    return rows.length ? `${rows.join('\n')}\n` : 'No attachments.\n';
  },
  plan(input) {
    return {
      item_key: input.item_key,
      action: input.action ?? 'get',
      ...(input.save_path !== undefined
        ? { save_path: input.save_path, overwrite: input.overwrite === true }
        : { writes: 'nothing (the file is read)' }),
    };
  },
  async run(input, deps) {
    const { listAttachments } = await import('../../core/attachments/list.js');
    if (input.action === 'list' || input.action === undefined) {
      const listed = await listAttachments(deps, input);
      if (input.action === 'list' || listed.item.data.itemType !== 'attachment') {
        return {
          backend: listed.backend,
          library: listed.library,
          action: 'list' as const,
          itemKey: listed.item.key,
          attachments: listed.entries.slice(0, 200),
          totalResults: listed.entries.length,
          provenance: PROVENANCE,
        };
      }
    }
    const { getAttachment } = await import('../../core/attachments/download.js');
    const out = await getAttachment(deps, input, async (path, bytes) => {
      // Streamed to a temporary file and put in place only once the bytes are whole and checked.
      const { saveFile } = await import('../../render/save.js');
      return saveFile(path, bytes, {
        overwrite: input.overwrite === true,
        env: deps.env,
        fileRoot: deps.fileRoot,
        sharedState: deps.sharedState,
      });
    });
    const { savedWithResource } = await import('../../render/save.js');
    return { ...savedWithResource(out, deps.fileRoot), action: 'get' as const, provenance: PROVENANCE };
  },
});
