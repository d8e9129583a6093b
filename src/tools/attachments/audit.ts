/**
 * `zotero_attachment_audit` / `zot attachment audit`: the library's attachment files checked
 * in one pass (missing on this computer, missing in the cloud, MD5 differing from Zotero's),
 * and the regular items without any PDF; bounded lists, whole counts.
 */
import * as z from 'zod';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { answeredFields } from '../shared/output.js';
import { PROVENANCE, libraryParams } from '../shared/params.js';

const attachment = z.object({
  key: z.string(),
  parentItem: z.string().nullable(),
  filename: z.string().nullable(),
  contentType: z.string().nullable(),
  md5: z.string().nullable().optional().describe('md5Differs: Zotero’s hash.'),
  localMd5: z.string().optional().describe('md5Differs: the MD5 of the file on this computer.'),
});

export default defineTool({
  name: 'zotero_attachment_audit',
  title: 'Audit attachment files',
  summary: 'Audit attachment files: missing here, missing in the cloud, MD5 differing; items without a PDF.',
  description:
    "Audit all attachment files: missing on this computer or in Zotero's cloud, MD5 differing, items without a PDF; counts are whole, lists cut at limit (no paging: raise limit). Desktop data without a key, else the Web API with ZOTERO_API_KEY. One item: zotero_get_attachment.",
  tier: 'read',
  openWorld: true,
  since: '0.2.0',
  toolset: 'files',
  cli: [{ path: ['attachment', 'audit'] }],
  input: z
    .object({
      limit: z
        .number()
        .int()
        .min(1)
        .max(500)
        .optional()
        .meta({ default: 100 })
        .describe('Entries of each list.'),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    ...answeredFields,
    attachments: z.number().int().describe('Attachments in the library.'),
    storedFiles: z.number().int().describe('Of them, files Zotero stores (not linked files or links).'),
    counts: z.object({
      missingLocally: z.number().int(),
      missingInCloud: z.number().int(),
      md5Differs: z.number().int(),
      itemsWithoutPdf: z.number().int(),
    }),
    missingLocally: z.array(attachment).describe('Stored files not on this computer.'),
    missingInCloud: z.array(attachment).describe('Stored files Zotero has no synced hash for.'),
    md5Differs: z.array(attachment).describe('Files on this computer whose MD5 differs from Zotero’s.'),
    itemsWithoutPdf: z
      .array(z.object({ key: z.string(), itemType: z.string(), title: z.string() }))
      .describe('Regular top-level items with no PDF attachment.'),
    hashed: z.number().int().describe('Files hashed (the others had the modification time Zotero recorded).'),
    truncated: z.boolean().optional().describe('A list was cut at limit (counts are whole).'),
    dataDir: z.string().nullable().describe('The Zotero data directory whose storage folder was checked.'),
    message: z.string().optional(),
    provenance: z.string(),
  }),
  summarize: (out) =>
    `${plural(out.storedFiles, 'stored file')}: ${out.counts.missingLocally} missing here, ${out.counts.missingInCloud} missing in the cloud, ${out.counts.md5Differs} with a different MD5; ${plural(out.counts.itemsWithoutPdf, 'item')} without a PDF.${out.truncated ? ' Lists cut at limit.' : ''}`,
  async run(input, deps) {
    const { attachmentAudit } = await import('../../core/attachments/audit.js');
    return { ...(await attachmentAudit(deps, input)), provenance: PROVENANCE };
  },
});
