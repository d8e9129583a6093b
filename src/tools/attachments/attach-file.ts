/**
 * `zotero_attach_file` / `zot attach KEY --file PATH… [--title T]`: stored files through the Web API
 * upload; `zot attach KEY --oa`: an open-access PDF of the item's DOI, found, checked and uploaded
 * the same way (core/attachments/open-access.ts).
 */
import * as z from 'zod';
import { checkOpenAccessConfig, planOpenAccess } from '../../core/attachments/open-access-plan.js';
import {
  checkLinkInput,
  mergeAttachRetry,
  planAttach,
  retryAttachInput,
} from '../../core/attachments/attach-plan.js';
import { paramRef, onlyOn } from '../../core/call/refs.js';
import { ZoteusError } from '../../core/errors.js';
import { defineTool } from '../../core/tool.js';
import { libraryParams, zoteroKey } from '../shared/params.js';

const attached = z.object({
  file: z.string().describe('The path (or filename) as given.'),
  key: z.string().describe('Key of the new attachment item, or of the attachment that got a new version.'),
  filename: z.string(),
  title: z.string(),
  contentType: z.string().describe('Detected from the bytes, then the name.'),
  size: z.number().int().describe('Bytes.'),
  md5: z.string().describe('MD5 of the file, as the library now reports it.'),
  upload: z
    .enum(['uploaded', 'exists', 'linked'])
    .describe('exists: the server already had these bytes; linked: a link to the file, nothing uploaded.'),
  path: z.string().optional().describe('With link: the absolute path the attachment points at.'),
  version: z
    .enum(['new'])
    .optional()
    .describe('new: a new version of the attachment key (parent_item was that attachment).'),
  previousMd5: z.string().optional().describe('MD5 of the version it replaced.'),
});

const refusedCandidate = z.object({
  source: z.enum(['unpaywall', 'openalex']),
  url: z.string(),
  reason: z.string().describe('Why this candidate was not attached.'),
});

const openAccess = z
  .object({
    doi: z.string(),
    source: z.enum(['unpaywall', 'openalex']).describe('The source that named the attached PDF.'),
    url: z.string().describe('Where the attached PDF was downloaded from (before redirects).'),
    version: z.string().optional().describe('submittedVersion, acceptedVersion or publishedVersion.'),
    license: z.string().optional(),
    refused: z.array(refusedCandidate).describe('Candidates tried first, each with why it was refused.'),
    notes: z.array(z.string()).describe('Sources skipped, unreachable or without a record.'),
  })
  .describe('With oa: which open-access copy was attached.');

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
  description:
    "Attach files to an item: path (on the Zoteus machine) or content_base64 with filename, uploaded, MD5 checked; link: true links a path in place (My Library only); oa: true fetches a checked open-access PDF. Writes to the desktop's local API when authorised, else the Web API with a ZOTERO_API_KEY that can write. Not idempotent without idempotency_key. Read files: zotero_get_attachment.",
  tier: 'write',
  openWorld: true,
  needsKey: true,
  since: '0.2.0',
  toolset: 'files',
  undo: {
    restores:
      "a created attachment goes to the trash; an attachment's fields (title, filename, content type) as they were",
    cannot: "the file's earlier bytes, once a new version replaced them",
  },
  cli: [
    {
      path: ['attach'],
      args: ['parent_item'],
      flags: { path: 'file', content_base64: 'content' },
      summary:
        'Attach files to an item: `zot attach KEY --file PATH… [--title T]`, or `--oa` for an open-access PDF (uploaded to Zotero storage).',
    },
  ],
  input: z
    .object({
      parent_item: zoteroKey('parent_item').describe(
        onlyOn('cli', 'Key of the item the files go under, e.g. "ABCD2345".'),
      ),
      path: z
        .array(z.string().min(1).max(4096))
        .min(1)
        .max(50)
        .optional()
        .describe(onlyOn('cli', 'Files to attach, on the machine Zoteus runs on.')),
      content_base64: z
        .string()
        .min(1)
        .max(10_000_000)
        .optional()
        .describe(
          onlyOn('cli', `The file’s bytes, base64 (at most 7 MB decoded); needs ${paramRef('filename')}.`),
        ),
      filename: z
        .string()
        .min(1)
        .max(255)
        .optional()
        .describe(`Name of the file sent as ${paramRef('content_base64')}.`),
      title: z
        .string()
        .min(1)
        .max(500)
        .optional()
        .describe(
          onlyOn(
            'cli',
            `Title of the attachment (default: the file name; with ${paramRef('oa')}, Zotero’s "Full Text PDF" or version).`,
          ),
        ),
      oa: z
        .boolean()
        .optional()
        .describe(
          onlyOn(
            'cli',
            `Instead of files or ${paramRef('content_base64')}: find an open-access PDF of the item’s DOI (Unpaywall, OpenAlex), check it and attach it.`,
          ),
        ),
      link: z
        .boolean()
        .optional()
        .describe(
          onlyOn('cli', 'Link the files where they are instead of uploading them (My Library only).'),
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    parentItem: z.string(),
    succeeded: z.array(attached),
    failed: z.array(failedFile),
    libraryVersion: z.number().int().optional(),
    openAccess: openAccess.optional(),
  }),
  summarize: (out) =>
    out.succeeded.length === 1 && out.succeeded[0]?.version === 'new'
      ? `New version of attachment ${out.succeeded[0].key}: ${out.succeeded[0].filename}`
      : `${out.succeeded.some((f) => f.upload === 'linked') ? 'Linked' : 'Attached'} ${out.succeeded.length} file${out.succeeded.length === 1 ? '' : 's'} to ${out.parentItem}` +
        (out.failed.length ? `; ${out.failed.length} failed` : '') +
        (out.succeeded.length ? `: ${out.succeeded.map((f) => `${f.filename} (${f.key})`).join(', ')}` : '') +
        (out.openAccess && out.succeeded.length
          ? `, open-access PDF from ${out.openAccess.source} (${out.openAccess.url})`
          : ''),
  next: (out) => [`zot get ${out.parentItem}`],
  serverPaths: { path: { instead: `${paramRef('content_base64')} with ${paramRef('filename')}` } },
  check(input, { config }) {
    if (input.link && input.oa) {
      throw new ZoteusError(
        'validation_error',
        `Give either ${paramRef('oa', 'true')} (an open-access PDF found by DOI) or ${paramRef('link', 'true')} (files linked where they are), not both.`,
        { field: 'link' },
      );
    }
    checkLinkInput(config, input);
    if (!input.oa) return;
    const other = (['path', 'content_base64', 'filename'] as const).find((f) => input[f] !== undefined);
    if (other) {
      throw new ZoteusError(
        'validation_error',
        `Give either ${paramRef('oa', 'true')} (an open-access PDF found by DOI) or ${paramRef(other)}, not both.`,
        { field: other },
      );
    }
    checkOpenAccessConfig(config);
  },
  plan(input, deps) {
    if (input.oa) return planOpenAccess(deps.config, input);
    // Offline: the files are read (streamed) for their size and MD5; the CLI has no file root.
    return planAttach({ fileRoot: undefined }, input);
  },
  retryFailed: {
    // With oa the one file is found again (the same bytes get the same attachment key).
    input: (input, previous) =>
      input.oa
        ? previous.failed.length > 0
          ? input
          : null
        : (retryAttachInput(input, previous as never) as typeof input | null),
    merge: (previous, retry) => {
      const merged = mergeAttachRetry(previous as never, retry as never) as typeof previous;
      const oa = retry.openAccess ?? previous.openAccess;
      return oa ? { ...merged, openAccess: oa } : merged;
    },
  },
  async run(input, deps) {
    if (input.oa) {
      const { attachOpenAccess } = await import('../../core/attachments/open-access.js');
      return attachOpenAccess(deps, input);
    }
    if (input.link) {
      const { linkFiles } = await import('../../core/attachments/link.js');
      return linkFiles(deps, input);
    }
    const { attachFiles } = await import('../../core/attachments/upload.js');
    return attachFiles(deps, input);
  },
});
