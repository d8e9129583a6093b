/**
 * A highlight annotation on a PDF attachment from a quoted passage: the PDF is read from this
 * computer (the desktop's `storage/<KEY>/`), the quote located in its text layer (locate.ts),
 * and the annotation item created where writes go (write-route.ts: the desktop's local API when a
 * person authorised it, else the Web API) with a write token, so a retried call never creates it
 * twice.
 */
import { readFile } from 'node:fs/promises';
import { paramRef } from '../call/refs.js';
import { ZoteusError } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import { webClient } from '../library/keys.js';
import { openWebLibrary } from '../library/web.js';
import type { Deps } from '../tool.js';
import { createObjects } from '../writes/index.js';
import { describeAttachment, listAttachments, str } from '../attachments/list.js';
import { findQuote, pdfPages, type Match, type Rect } from './locate.js';

export const DEFAULT_COLOR = '#ffd400';

export interface CreateAnnotationInput extends LibraryArgs {
  attachment_key: string;
  quote: string;
  comment?: string | undefined;
  color?: string | undefined;
  page?: number | undefined;
}

export interface CreateAnnotationOutput {
  key: string;
  attachmentKey: string;
  text: string;
  color: string;
  pageIndex: number;
  pageLabel: string;
  rects: Rect[];
  sortIndex: string;
  libraryVersion?: number;
}

/** A candidate's context, at most about 200 characters (a long quote's middle left out). */
const shorten = (s: string): string => (s.length > 200 ? `${s.slice(0, 100)}…${s.slice(-100)}` : s);

/** Which match the quote names: the only one, or the one on `page` (1-based); else validation_error. */
export function pickMatch(matches: readonly Match[], input: CreateAnnotationInput): Match {
  const quote = input.quote;
  const onPage = input.page === undefined ? matches : matches.filter((m) => m.pageIndex + 1 === input.page);
  if (matches.length === 0 || onPage.length === 0) {
    const where = input.page === undefined || matches.length === 0 ? '' : ` on page ${input.page}`;
    const elsewhere =
      matches.length > 0
        ? ` It is on page ${[...new Set(matches.map((m) => m.pageIndex + 1))].join(', ')}.`
        : '';
    throw new ZoteusError(
      'validation_error',
      `The quote was not found in the PDF${where}: “${quote}”.${elsewhere}`,
      {
        field: input.page === undefined || matches.length === 0 ? 'quote' : 'page',
        hint: 'Quote the passage exactly as it reads in the PDF (spaces, line breaks and hyphens are ignored); a scanned PDF without a text layer has nothing to find.',
      },
    );
  }
  if (onPage.length > 1) {
    const candidates = onPage
      .slice(0, 10)
      .map((m) => `page ${m.pageIndex + 1} (label ${m.pageLabel}): “…${shorten(m.context)}…”`)
      .join('; ');
    throw new ZoteusError(
      'validation_error',
      `The quote occurs ${onPage.length} times in the PDF: ${candidates}${onPage.length > 10 ? '; …' : ''}.`,
      {
        field: input.page === undefined ? 'quote' : 'page',
        hint:
          input.page === undefined
            ? `${paramRef('page', String(onPage[0]!.pageIndex + 1))} picks the one on that page, or quote a longer passage.`
            : 'Quote a longer passage: it occurs more than once on that page.',
      },
    );
  }
  return onPage[0]!;
}

export async function createAnnotation(
  deps: Deps,
  input: CreateAnnotationInput,
): Promise<CreateAnnotationOutput> {
  const listed = await listAttachments(deps, { ...input, item_key: input.attachment_key });
  const att = listed.item;
  if (att.data.itemType !== 'attachment') {
    throw new ZoteusError(
      'validation_error',
      `'${att.key}' is not an attachment (it is ${String(att.data.itemType)}): annotations go on a PDF attachment.`,
      { field: 'attachment_key' },
    );
  }
  const type = (str(att.data.contentType) ?? '').toLowerCase();
  if (type !== 'application/pdf') {
    throw new ZoteusError(
      'validation_error',
      `Attachment '${att.key}' is not a PDF (${type || 'no content type'}): only PDF annotations can be created.`,
      { field: 'attachment_key' },
    );
  }
  const entry = describeAttachment(listed.dataDir, att);
  if (!entry.localPath) {
    throw new ZoteusError(
      'not_found',
      `The PDF of attachment '${att.key}' is not on this computer${entry.inCloud ? ' (it is only in Zotero’s cloud storage, and downloading it is not supported yet)' : ''}: no annotation was created.`,
      {
        field: 'attachment_key',
        hint: 'Let the Zotero desktop app download the file (open the attachment there, or sync with files on), then ask again.',
      },
    );
  }
  const pages = await pdfPages(new Uint8Array(await readFile(entry.localPath)));
  const match = pickMatch(findQuote(pages, input.quote), input);
  const color = (input.color ?? DEFAULT_COLOR).toLowerCase();

  const client = await webClient(deps);
  const call = client.newCall();
  const lib = await openWebLibrary(deps, input, { access: 'write', call });
  // annotationType first: the desktop applies the keys in order.
  const annotation: Record<string, unknown> = {
    itemType: 'annotation',
    annotationType: 'highlight',
    parentItem: att.key,
    annotationText: match.text,
    annotationComment: input.comment ?? '',
    annotationColor: color,
    annotationPageLabel: match.pageLabel,
    annotationSortIndex: match.sortIndex,
    annotationPosition: JSON.stringify({ pageIndex: match.pageIndex, rects: match.rects }),
  };
  const result = await createObjects(lib.client, {
    library: lib.prefix,
    kind: 'items',
    objects: [annotation],
    labels: ['annotation'],
    ids: deps.writeIds,
    call,
  });
  const made = result.successful[0];
  if (!made) {
    const failure = result.failed[0];
    const code = (failure?.reason ?? 'api_error') as ConstructorParameters<typeof ZoteusError>[0];
    throw new ZoteusError(
      code,
      `Zotero refused the annotation (HTTP ${failure?.code ?? 0}): ${failure?.message ?? 'no answer for it'}.`,
      { status: failure?.code, field: 'attachment_key' },
    );
  }
  return {
    key: made.key,
    attachmentKey: att.key,
    text: match.text,
    color,
    pageIndex: match.pageIndex,
    pageLabel: match.pageLabel,
    rects: match.rects,
    sortIndex: match.sortIndex,
    ...(result.libraryVersion !== undefined ? { libraryVersion: result.libraryVersion } : {}),
  };
}
