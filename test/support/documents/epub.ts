/**
 * A tiny EPUB writer for fixtures: a ZIP (written here, entries stored or deflated) holding
 * `mimetype`, `META-INF/container.xml`, an OPF with a spine, and one XHTML file per chapter.
 */
import { deflateRawSync } from 'node:zlib';

export interface EpubChapter {
  title: string;
  /** Paragraphs of the chapter (plain text; escaped when written). */
  paragraphs: string[];
  /** Sub-headings: `{ heading, paragraphs }` sections after the chapter's own paragraphs. */
  sections?: Array<{ heading: string; paragraphs: string[] }>;
}

export interface EpubSpec {
  title: string;
  chapters: EpubChapter[];
  /** Deflate every entry but `mimetype` (default false: stored). */
  deflate?: boolean;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A ZIP archive of these entries, in order. */
export function makeZip(entries: Array<{ name: string; data: Buffer | string; deflate?: boolean }>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const data = typeof e.data === 'string' ? Buffer.from(e.data, 'utf8') : e.data;
    const name = Buffer.from(e.name, 'utf8');
    const body = e.deflate ? deflateRawSync(data) : data;
    const method = e.deflate ? 8 : 0;
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, body);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function makeEpub(spec: EpubSpec): Buffer {
  const deflate = spec.deflate ?? false;
  const container = `<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>`;
  const ids = spec.chapters.map((_, i) => `ch${i + 1}`);
  // The manifest lists the chapters in reverse: the spine, not the manifest, gives the order.
  const manifest = ids
    .map((id) => `    <item id="${id}" href="text/${id}.xhtml" media-type="application/xhtml+xml"/>`)
    .reverse()
    .join('\n');
  const opf = `<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>${esc(spec.title)}</dc:title><dc:identifier id="uid">fixture</dc:identifier></metadata>
  <manifest>
${manifest}
  </manifest>
  <spine>
${ids.map((id) => `    <itemref idref="${id}"/>`).join('\n')}
  </spine>
</package>`;
  const chapters = spec.chapters.map((c, i) => {
    const body = [`<h1>${esc(c.title)}</h1>`, ...c.paragraphs.map((p) => `<p>${esc(p)}</p>`)];
    for (const s of c.sections ?? [])
      body.push(`<h2>${esc(s.heading)}</h2>`, ...s.paragraphs.map((p) => `<p>${esc(p)}</p>`));
    return {
      name: `OEBPS/text/${ids[i]}.xhtml`,
      data: `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>${esc(c.title)}</title><style>p { margin: 0 }</style></head>
<body>
${body.join('\n')}
</body></html>`,
      deflate,
    };
  });
  return makeZip([
    { name: 'mimetype', data: 'application/epub+zip' },
    { name: 'META-INF/container.xml', data: container, deflate },
    { name: 'OEBPS/content.opf', data: opf, deflate },
    ...chapters,
  ]);
}
