/**
 * ISBNs: reading them in the forms people paste (hyphens, spaces, an `ISBN` prefix), checking
 * their check digit, and ISBN-10 <-> ISBN-13, so that the duplicate check knows a book by either.
 * The catalogues that look books up are in books.ts.
 */
export interface Isbn {
  /** The ISBN-13, digits only: what identifies the book for the duplicate check. */
  isbn13: string;
  /** The ISBN-10 (digits and maybe a final X), when the book has one (978 prefix). */
  isbn10?: string;
  /** The form given, digits only (10 or 13): what the catalogues are asked for. */
  compact: string;
}

export type IsbnReading = { isbn: Isbn } | { error: string };

const PREFIX = /^(?:urn:)?isbn(?:-1[03])?\s*[:=]?\s*/i;
/** Hyphens, spaces and the dashes word processors put in their place. */
const SEPARATORS = /[\s\u2010-\u2015-]+/g;

function check10(first9: string): string {
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (10 - i) * Number(first9[i]);
  const digit = (11 - (sum % 11)) % 11;
  return digit === 10 ? 'X' : String(digit);
}

function check13(first12: string): string {
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += (i % 2 === 0 ? 1 : 3) * Number(first12[i]);
  return String((10 - (sum % 10)) % 10);
}

/** ISBN-10 (valid) → ISBN-13. */
export function isbn10to13(isbn10: string): string {
  const first12 = `978${isbn10.slice(0, 9)}`;
  return first12 + check13(first12);
}

/** ISBN-13 (valid) → ISBN-10; undefined for the 979 range, which has none. */
export function isbn13to10(isbn13: string): string | undefined {
  if (!isbn13.startsWith('978')) return undefined;
  const first9 = isbn13.slice(3, 12);
  return first9 + check10(first9);
}

/** Whether a text has the shape of an ISBN (10 or 13 digits, hyphens and spaces allowed). */
export function looksLikeIsbn(text: string): boolean {
  const s = text.trim();
  if (s.length > 40) return false;
  const body = s.replace(PREFIX, '');
  if (!/^[\d\s\u2010-\u2015-]+[\dXx]$/.test(body)) return false;
  const compact = body.replace(SEPARATORS, '');
  return compact.length === 10 || compact.length === 13;
}

/**
 * An ISBN read and checked: `{isbn}` when it is one, `{error}` saying why a text of an ISBN's
 * shape is not one (its check digit, a 13-digit number outside 978/979), undefined when the text
 * does not look like an ISBN at all.
 */
export function parseIsbn(text: string): IsbnReading | undefined {
  if (!looksLikeIsbn(text)) return undefined;
  const compact = text.trim().replace(PREFIX, '').replace(SEPARATORS, '').toUpperCase();
  if (compact.length === 10) {
    if (!/^\d{9}[\dX]$/.test(compact)) return { error: 'an ISBN-10 has an X only as its last character' };
    const expected = check10(compact.slice(0, 9));
    if (compact[9] !== expected)
      return { error: `its check digit is ${compact[9]}, but the ISBN-10's digits call for ${expected}` };
    return { isbn: { isbn13: isbn10to13(compact), isbn10: compact, compact } };
  }
  if (!/^\d{13}$/.test(compact)) return { error: 'an ISBN-13 is 13 digits' };
  if (!compact.startsWith('978') && !compact.startsWith('979'))
    return { error: 'an ISBN-13 starts with 978 or 979' };
  const expected = check13(compact.slice(0, 12));
  if (compact[12] !== expected)
    return { error: `its check digit is ${compact[12]}, but the ISBN-13's digits call for ${expected}` };
  const isbn10 = isbn13to10(compact);
  return { isbn: { isbn13: compact, ...(isbn10 ? { isbn10 } : {}), compact } };
}

/** Every valid ISBN in a text (an item's ISBN field: "978… 0…", hyphenated or not), as ISBN-13s. */
export function isbnsIn(text: string): string[] {
  const out = new Set<string>();
  const normalised = text.replace(/(\d)[\u2010-\u2015-](?=[\dXx])/g, '$1');
  for (const token of normalised.match(/\b\d{9}[\dXx]\b|\b\d{13}\b/g) ?? []) {
    const read = parseIsbn(token);
    if (read && 'isbn' in read) out.add(read.isbn.isbn13);
  }
  return [...out];
}
