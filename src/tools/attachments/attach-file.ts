/** `zotero_attach_file` / `zot attach KEY --file PATH… [--title T]`: stored files through the Web API upload. */
import * as z from 'zod';
import { mergeAttachRetry, planAttach, retryAttachInput } from '../../core/attachments/upload.js';
import { defineTool } from '../../core/tool.js';
import { libraryParams, zoteroKey } from '../shared/params.js';

const attached = z.object({
  file: z.string().describe('The path (or filename) as given.'),
  key: z.string().describe('Key of the new attachment item.'),
  filename: z.string(),
  title: z.string(),
  contentType: z.string().describe('Detected from the bytes, then the name.'),
  size: z.number().int().describe('Bytes.'),
  md5: z.string().describe('MD5 of the file, as the library now reports it.'),
  upload: z.enum(['uploaded', 'exists']).describe('exists: the server already had these bytes.'),
});

const failedFile = z.object({
  index: z.number().int(),
  file: z.string(),
  key: z.string().optional().describe('The attachment item left in the library, when there is one.'),
  code: z.number().int().describe('HTTP status of the failing step (0: no answer).'),
  reason: z.string(),
  message: z.string(),
  trashed: z.boolean().optional().describe('The empty attachment item was moved to the trash.'),
});

export default defineTool({
  name: 'zotero_attach_file',
  title: 'Attach files to an item',
  summary: 'Attach stored files to an item (upload to the Zotero cloud storage); per-file results.',
  description: [
    'Writes to the Zotero cloud library (Web API): for each file, creates a child attachment item (imported_file, content',
    'type detected from the bytes) under parent_item, uploads the file to Zotero storage and checks the MD5 the library',
    'then reports. path: files on the machine Zoteus runs on (refused on a shared deployment); or content_base64 with',
    'filename (at most 7 MB decoded). A file the server already holds is not sent again (upload: exists). A file that',
    'fails (quota exceeded, upload or registration refused) is listed in failed and its empty attachment item is moved',
    'to the trash. Not idempotent: calling twice attaches twice. Result: succeeded (key, filename, contentType, size,',
    'md5, upload), failed, libraryVersion.',
  ].join(' '),
  tier: 'write',
  openWorld: true,
  needsKey: true,
  since: '0.2.0',
  cli: [
    {
      path: ['attach'],
      args: ['parent_item'],
      flags: { path: 'file', content_base64: 'content' },
      summary:
        'Attach files to an item: `zot attach KEY --file PATH… [--title T]` (uploaded to Zotero storage).',
    },
  ],
  input: z
    .object({
      parent_item: zoteroKey('parent_item').describe('Key of the item the files go under, e.g. "ABCD2345".'),
      path: z
        .array(z.string().min(1).max(4096))
        .min(1)
        .max(50)
        .optional()
        .describe('Files to attach, on the machine Zoteus runs on.'),
      content_base64: z
        .string()
        .min(1)
        .max(10_000_000)
        .optional()
        .describe('The file’s bytes, base64 (at most 7 MB decoded); needs filename.'),
      filename: z.string().min(1).max(255).optional().describe('Name of the file sent as content_base64.'),
      title: z
        .string()
        .min(1)
        .max(500)
        .optional()
        .describe('Title of the attachment (default: the file name).'),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    parentItem: z.string(),
    succeeded: z.array(attached),
    failed: z.array(failedFile),
    libraryVersion: z.number().int().optional(),
  }),
  summarize: (out) =>
    `Attached ${out.succeeded.length} file${out.succeeded.length === 1 ? '' : 's'} to ${out.parentItem}` +
    (out.failed.length ? `; ${out.failed.length} failed` : '') +
    (out.succeeded.length ? `: ${out.succeeded.map((f) => `${f.filename} (${f.key})`).join(', ')}` : ''),
  next: (out) => [`zot get ${out.parentItem}`],
  plan(input) {
    // Offline: the files are read (streamed) for their size and MD5; the CLI has no file root.
    return planAttach({ fileRoot: undefined }, input);
  },
  retryFailed: {
    input: (input, previous) => retryAttachInput(input, previous as never) as typeof input | null,
    merge: (previous, retry) => mergeAttachRetry(previous as never, retry as never) as never,
  },
  async run(input, deps) {
    const { attachFiles } = await import('../../core/attachments/upload.js');
    return attachFiles(deps, input);
  },
});
