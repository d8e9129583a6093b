/**
 * What a Markdown viewer makes of a rendered evidence table: marked (GFM) turns it into HTML,
 * and this reads back the tags it produced and the text each cell and paragraph shows.
 */
import { Marked } from 'marked';

/** Tags a table of plain text may produce; anything else would be markup from a cell. */
const TABLE_TAGS = new Set(['table', 'thead', 'tbody', 'tr', 'th', 'td', 'p', 'ul', 'li']);

export interface MarkdownView {
  html: string;
  /** Every tag marked produced that a table of plain text would not, with its attributes. */
  liveMarkup: string[];
  /** Header and body rows, each cell as the text a viewer shows. */
  rows: string[][];
  /** Text of the paragraphs and list items around the table (caption, coverage, warnings). */
  blocks: string[];
}

const marked = new Marked({ gfm: true, async: false });

/** HTML text back to the characters it shows (marked escapes exactly these five). */
function htmlText(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

export function viewMarkdown(markdown: string): MarkdownView {
  const html = marked.parse(markdown) as string;
  const liveMarkup: string[] = [];
  for (const m of html.matchAll(/<\/?([a-zA-Z][\w-]*)([^>]*)>/g)) {
    const [tag, name, attributes] = m as unknown as [string, string, string];
    // An alignment is the only attribute a table cell may carry; an email address becomes
    // a mailto: link, which runs nothing.
    const inert =
      (TABLE_TAGS.has(name) && /^(?: align="(?:left|right|center)")?$/.test(attributes)) ||
      (name === 'a' && /^(?: href="mailto:[^"]*")?$/.test(attributes));
    if (!inert) liveMarkup.push(tag);
  }
  const rows = [...html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((tr) =>
    [...(tr[1] as string).matchAll(/<(td|th)[^>]*>([\s\S]*?)<\/\1>/g)].map((cell) =>
      htmlText(cell[2] as string),
    ),
  );
  const blocks = [...html.matchAll(/<(p|li)>([\s\S]*?)<\/\1>/g)].map((b) => htmlText(b[2] as string));
  return { html, liveMarkup, rows, blocks };
}
