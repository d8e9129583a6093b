/**
 * EPUB text: the ZIP's `META-INF/container.xml` names the OPF, whose spine orders the XHTML
 * documents; each is stripped to text (block elements end lines, h1–h6 become headings).
 * An EPUB has no pages: its passages carry no page locator.
 */
import { posix } from 'node:path';
import { decodeEntities } from '../items/html.js';
import { ZoteusError } from '../errors.js';
import type { FullDocument, Heading } from './document.js';
import { openZip } from './zip.js';

const attr = (tag: string, name: string): string | undefined =>
  new RegExp(`\\s${name}\\s*=\\s*("([^"]*)"|'([^']*)')`, 'i')
    .exec(tag)
    ?.slice(2)
    .find((v) => v !== undefined);

const BLOCK =
  /^(p|div|br|li|ul|ol|tr|table|section|article|aside|header|footer|blockquote|pre|figure|figcaption|dt|dd|dl|hr|nav|title)$/i;

/** One XHTML document as text appended to `out`, its headings recorded at their offsets. */
export function appendXhtml(xhtml: string, out: { text: string; headings: Heading[] }): void {
  const body = /<body\b[^>]*>([\s\S]*)<\/body>/i.exec(xhtml)?.[1] ?? xhtml;
  const cleaned = body.replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, '').replace(/<!--[\s\S]*?-->/g, '');
  let line = '';
  let heading: number | undefined;
  const endLine = () => {
    const t = line.replace(/\s+/g, ' ').trim();
    line = '';
    if (t === '') return;
    if (out.text.length > 0 && !out.text.endsWith('\n')) out.text += '\n';
    if (heading !== undefined) out.headings.push({ offset: out.text.length, text: t, level: heading });
    out.text += t;
  };
  const re = /<(\/?)([a-zA-Z][\w:-]*)[^>]*>|([^<]+)/g;
  for (let m = re.exec(cleaned); m; m = re.exec(cleaned)) {
    if (m[3] !== undefined) {
      line += decodeEntities(m[3]);
      continue;
    }
    const name = m[2]!.toLowerCase().replace(/^.*:/, '');
    const h = /^h([1-6])$/.exec(name);
    if (h) {
      endLine();
      heading = m[1] ? undefined : Number(h[1]);
    } else if (BLOCK.test(name)) endLine();
  }
  endLine();
}

export function extractEpub(buf: Buffer): FullDocument {
  const zip = openZip(buf);
  const text = (name: string) => zip.read(name)?.toString('utf8');
  const container = text('META-INF/container.xml');
  const opfPath = container ? attr(/<rootfile\b[^>]*>/i.exec(container)?.[0] ?? '', 'full-path') : undefined;
  const opf = opfPath ? text(opfPath) : undefined;
  if (!opfPath || !opf) {
    throw new ZoteusError(
      'validation_error',
      'The EPUB has no package document (META-INF/container.xml → OPF).',
    );
  }
  const base = posix.dirname(opfPath);
  const manifest = new Map<string, { href: string; type: string }>();
  for (const tag of opf.match(/<item\b[^>]*>/gi) ?? []) {
    const id = attr(tag, 'id');
    const href = attr(tag, 'href');
    if (id && href) manifest.set(id, { href, type: attr(tag, 'media-type') ?? '' });
  }
  const spine = (opf.match(/<itemref\b[^>]*>/gi) ?? [])
    .map((tag) => manifest.get(attr(tag, 'idref') ?? ''))
    .filter((e): e is { href: string; type: string } => e !== undefined && /html|xml/i.test(e.type));
  const out = { text: '', headings: [] as Heading[] };
  for (const entry of spine) {
    const path = posix.normalize(posix.join(base, decodeURIComponent(entry.href.replace(/#.*$/, ''))));
    const xhtml = text(path);
    if (xhtml === undefined) continue;
    if (out.text.length > 0) out.text += '\n\n';
    appendXhtml(xhtml, out);
  }
  return { text: out.text, headings: out.headings };
}
