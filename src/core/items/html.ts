/**
 * Note HTML and markup text: plain text → escaped note HTML, note HTML → plain text, and the
 * entity decoding the importers need (arXiv's Atom, Crossref's JATS abstracts).
 */
import { ZoteusError } from '../errors.js';
import { toolRef } from '../call/refs.js';

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  ndash: '\u2013',
  mdash: '\u2014',
  hellip: '\u2026',
  lsquo: '\u2018',
  rsquo: '\u2019',
  ldquo: '\u201c',
  rdquo: '\u201d',
};

/** `&amp;`, `&#233;`, `&#xE9;` and the common named entities → characters. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, body: string) => {
    if (body[0] === '#') {
      const code =
        body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[body.toLowerCase()] ?? whole;
  });
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * Plain text → note HTML: every character escaped, paragraphs (separated by blank lines) in
 * `<p>`, single line breaks as `<br>`. Nothing in the text can become markup.
 */
export function textToNoteHtml(text: string): string {
  const paragraphs = text
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .map((p) => p.replace(/^\n+|\n+$/g, ''))
    .filter((p) => p.trim() !== '');
  if (paragraphs.length === 0) return '<p></p>';
  return paragraphs.map((p) => `<p>${p.split('\n').map(escapeHtml).join('<br>')}</p>`).join('\n');
}

/** Whether a text contains any HTML tag (else it is taken as plain text). */
export function looksLikeHtml(text: string): boolean {
  return /<\/?[a-z][a-z0-9-]*(\s[^<>]*)?\/?>|<!--/i.test(text);
}

/** Markup → plain text: block ends and `<br>` become line breaks, tags go, entities are decoded. */
export function htmlToText(html: string): string {
  const text = html
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|h[1-6]|li|blockquote|pre|tr|jats:p|jats:title|jats:sec)\s*>/gi, '\n')
    .replace(/<li\b[^>]*>/gi, '- ')
    .replace(/<[^>]+>/g, '');
  return decodeEntities(text)
    .replace(/[ \t\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The first line of a note's text, as Zotero shows it for a title (at most 120 characters). */
export function noteTitle(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return line.length > 120 ? `${line.slice(0, 119)}\u2026` : line.trim();
}

/** JATS (Crossref abstracts) → plain paragraphs; a leading "Abstract" heading is dropped. */
export function jatsToText(jats: string): string {
  const withoutHeading = jats.replace(/^\s*<jats:title>\s*abstract\s*<\/jats:title>/i, '');
  return htmlToText(withoutHeading)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join('\n');
}

/** Collapses runs of white space (XML text, titles broken over lines). */
export function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The note's HTML: escaped plain text, or the given HTML (a body without any tag counts as text). */
export function noteHtml(input: { text?: string | undefined; html?: string | undefined }): string {
  if (input.text !== undefined && input.html !== undefined) {
    throw new ZoteusError('validation_error', 'Give the note as text or as html, not both.', {
      field: 'html',
    });
  }
  if (input.html !== undefined) return looksLikeHtml(input.html) ? input.html : textToNoteHtml(input.html);
  if (input.text !== undefined) return textToNoteHtml(input.text);
  throw new ZoteusError('validation_error', 'The note is empty: give its text (or html).', {
    field: 'text',
    hint: `For example ${toolRef('zotero_create_note', { parent_item: 'KEY', text: '"text"' })}, or ${toolRef('zotero_create_note', { parent_item: 'KEY', html: 'note.html' })}.`,
  });
}
