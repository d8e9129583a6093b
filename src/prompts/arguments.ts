/**
 * Prompt arguments several prompts take, validated once: MCP sends every argument as a string, so
 * each turns that string into what the prompt builds with, or says in the user's terms why not.
 */
import * as z from 'zod';
import { ZOTERO_KEY_PATTERN } from '../tools/shared/params.js';

export const KEY_RULE = '8 characters from 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ, e.g. ABCD2345';
export const MAX_STYLE_CHARS = 1000;

/** An optional Zotero key of `what` ("collection"), upper-cased. */
export function keyArgument(what: string, description: string) {
  return z
    .string()
    .optional()
    .transform((text, ctx): string | undefined => {
      const key = text?.trim().toUpperCase();
      if (key === undefined || key === '') return undefined;
      if (!ZOTERO_KEY_PATTERN.test(key)) {
        ctx.addIssue({
          code: 'custom',
          message: `${JSON.stringify(text)} is not a Zotero ${what} key (${KEY_RULE})`,
        });
        return z.NEVER;
      }
      return key;
    })
    .describe(description);
}

/** An optional whole number from 1 to `max`, `fallback` when left out. */
export function countArgument(description: string, bounds: { fallback: number; max: number }) {
  return z
    .string()
    .optional()
    .transform((text, ctx): number => {
      const trimmed = text?.trim() ?? '';
      if (trimmed === '') return bounds.fallback;
      const n = /^\d+$/.test(trimmed) ? Number(trimmed) : NaN;
      if (!Number.isInteger(n) || n < 1 || n > bounds.max) {
        ctx.addIssue({
          code: 'custom',
          message: `must be a whole number from 1 to ${bounds.max}; got ${JSON.stringify(text)}`,
        });
        return z.NEVER;
      }
      return n;
    })
    .describe(description);
}

/** An optional argument that must be one of `values` (case and surrounding spaces aside). */
export function oneOf<T extends string>(values: readonly T[], what: string) {
  return z
    .string()
    .optional()
    .transform((text, ctx): T | undefined => {
      const word = text?.trim().toLowerCase() ?? '';
      if (word === '') return undefined;
      const found = values.find((v) => v === word);
      if (found === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `must be ${values
            .map((v) => `"${v}"`)
            .join(', ')
            .replace(/, ([^,]*)$/, ' or $1')}; got ${JSON.stringify(text)}`,
        });
        return z.NEVER;
      }
      return found;
    })
    .describe(what);
}

/** An optional CSL style: an id or a .csl path, on one line. */
export function styleArgument(description: string) {
  return z
    .string()
    .optional()
    .transform((text, ctx): string | undefined => {
      const style = text?.trim() ?? '';
      if (style === '') return undefined;
      // eslint-disable-next-line no-control-regex
      if (style.length > MAX_STYLE_CHARS || /[\u0000-\u001f\u007f]/.test(style)) {
        ctx.addIssue({
          code: 'custom',
          message: `must be a CSL style id such as apa or chicago-author-date, or the path of a .csl file, on one line of at most ${MAX_STYLE_CHARS} characters`,
        });
        return z.NEVER;
      }
      return style;
    })
    .describe(description);
}
