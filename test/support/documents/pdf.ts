/**
 * A tiny PDF writer for fixtures: one page per entry, each page one uncompressed text object
 * in Helvetica (one line per `T*`), and optionally an outline (/Outlines) whose entries point
 * at pages. Known text on known pages, made by the project's own code.
 */

export interface PdfOutlineEntry {
  title: string;
  /** 1-based page number. */
  page: number;
  children?: PdfOutlineEntry[];
}

export interface PdfSpec {
  /** Each page's lines. */
  pages: string[][];
  outline?: PdfOutlineEntry[];
  title?: string;
}

/** A PDF literal string: the text is Latin-1 (WinAnsi), with `\`, `(` and `)` escaped. */
function literal(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\' || ch === '(' || ch === ')') out += `\\${ch}`;
    else if (code < 32 || code > 255) out += code > 255 ? '?' : ' ';
    else if (code > 126) out += `\\${code.toString(8).padStart(3, '0')}`;
    else out += ch;
  }
  return `(${out})`;
}

export function makePdf(spec: PdfSpec): Buffer {
  const objects: string[] = [];
  const add = (body: string): number => {
    objects.push(body);
    return objects.length;
  };
  const reserve = (): number => add('');
  const set = (id: number, body: string): void => {
    objects[id - 1] = body;
  };

  const catalog = reserve();
  const pagesId = reserve();
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const pageIds: number[] = [];
  for (const lines of spec.pages) {
    const ops = ['BT', '/F1 11 Tf', '14 TL', '72 740 Td'];
    lines.forEach((line, i) => {
      if (i > 0) ops.push('T*');
      ops.push(`${literal(line)} Tj`);
    });
    ops.push('ET');
    const stream = ops.join('\n');
    const content = add(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`);
    pageIds.push(
      add(
        `<< /Type /Page /Parent ${pagesId} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R >>`,
      ),
    );
  }
  set(
    pagesId,
    `<< /Type /Pages /Kids [${pageIds.map((p) => `${p} 0 R`).join(' ')}] /Count ${pageIds.length} >>`,
  );

  let outlinesRef = '';
  if (spec.outline && spec.outline.length > 0) {
    const root = reserve();
    const writeLevel = (
      entries: PdfOutlineEntry[],
      parent: number,
    ): { first: number; last: number; count: number } => {
      const ids = entries.map(() => reserve());
      let count = entries.length;
      entries.forEach((e, i) => {
        const page = pageIds[e.page - 1];
        if (page === undefined)
          throw new Error(`outline entry '${e.title}' points at missing page ${e.page}`);
        const parts = [
          `/Title ${literal(e.title)}`,
          `/Parent ${parent} 0 R`,
          `/Dest [${page} 0 R /XYZ 0 792 0]`,
        ];
        if (i > 0) parts.push(`/Prev ${ids[i - 1]} 0 R`);
        if (i < ids.length - 1) parts.push(`/Next ${ids[i + 1]} 0 R`);
        if (e.children && e.children.length > 0) {
          const kids = writeLevel(e.children, ids[i]!);
          parts.push(`/First ${kids.first} 0 R`, `/Last ${kids.last} 0 R`, `/Count ${kids.count}`);
          count += kids.count;
        }
        set(ids[i]!, `<< ${parts.join(' ')} >>`);
      });
      return { first: ids[0]!, last: ids[ids.length - 1]!, count };
    };
    const top = writeLevel(spec.outline, root);
    set(root, `<< /Type /Outlines /First ${top.first} 0 R /Last ${top.last} 0 R /Count ${top.count} >>`);
    outlinesRef = ` /Outlines ${root} 0 R /PageMode /UseOutlines`;
  }
  set(catalog, `<< /Type /Catalog /Pages ${pagesId} 0 R${outlinesRef} >>`);
  const info = spec.title ? add(`<< /Title ${literal(spec.title)} >>`) : undefined;

  let body = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  objects.forEach((obj, i) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${i + 1} 0 obj\n${obj}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) body += `${String(off).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R${info ? ` /Info ${info} 0 R` : ''} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}
