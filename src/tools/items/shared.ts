/** Output pieces shared by the item tools, described once so they say the same thing. */
import * as z from 'zod';
import { zoteroKey } from '../shared/params.js';

/** A per-object failure (agent-interface.md, "Partial success"). */
export const failedEntry = z.object({
  index: z.number().int().describe('Position of the object in the input (from 0).'),
  key: z.string().optional().describe('The object key (or, for tag deletes, the tag), when known.'),
  code: z
    .number()
    .int()
    .describe(
      'HTTP-style status: 404 missing, 403 no access, 400 invalid, 409 conflict, 412 changed concurrently, 413 too long.',
    ),
  message: z.string(),
  reason: z
    .string()
    .describe('The error code string (not_found, permission_denied, validation_error, conflict, …).'),
});

export const failedList = z
  .array(failedEntry)
  .describe('One entry per object that did not land (the others did); empty when all of them landed.');

export const libraryVersion = z
  .number()
  .int()
  .optional()
  .describe(
    "The library's Last-Modified-Version after this write (absent when nothing was read or written).",
  );

export const itemKeys = (what: string) =>
  z
    .array(zoteroKey('Each item key'))
    .min(1)
    .max(5000)
    .describe(`${what} (8-character Zotero keys, e.g. "ABCD2345").`);

/** A word for a count: `1 item`, `3 items`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Quotes a value for a `next` suggestion (the suggestion checker splits like a shell). */
export function quoted(value: string): string {
  return /^[\w.:/-]+$/.test(value) ? value : `"${value.replace(/"/g, "'")}"`;
}

/** At most this many keys go into a `next` suggestion; longer lists get no suggestion. */
export const SUGGESTION_KEYS = 10;
