/**
 * What `zotero_import` / `zot add` reads: a single DOI or arXiv id, a list of identifiers, or
 * the text of a file (`--from-file`) holding one identifier per line, BibTeX, RIS or CSL-JSON.
 * Each becomes an entry with a stable label (what the output's `entry` says), and entries can
 * be written back to text so that a retry sends only the ones that failed.
 */
import { ZoteusError } from '../errors.js';
import { MAX_INPUT_DEPTH, textNestsTooDeep } from '../input-bounds.js';
import { bibtexToCsl, parseBibtex } from './bibtex.js';
import { cslText, type CslItem } from './csl.js';
import { detectIdentifier, pageUrl, parseArxiv, parseDoi, type Identifier } from './identifiers.js';
import { parseIsbn } from './isbn.js';
import { parseRis, risToCsl } from './ris.js';
import { toolRef } from '../call/refs.js';

export const RECORD_FORMATS = ['identifiers', 'bibtex', 'ris', 'csljson'] as const;
export type RecordFormat = (typeof RECORD_FORMATS)[number];

/** Entries one call may carry (a file of more is refused before anything is sent). */
export const MAX_ENTRIES = 10_000;

export interface ImportEntry {
  /** The output's label: the identifier as given, or a record's DOI, arXiv id or citation key. */
  entry: string;
  /** Position in the input, from 0. */
  position: number;
  /** To resolve (identifiers, and records that carry nothing but one), and for the duplicate check. */
  identifier?: Identifier;
  /** A record's own metadata (BibTeX, RIS, CSL-JSON): mapped as is, not resolved. */
  csl?: CslItem;
  /** Why this entry cannot be imported (an unrecognised line); it fails without a request. */
  error?: ZoteusError;
  /** Source text (a line, a BibTeX or RIS record, a CSL-JSON object) for a retry of this entry. */
  raw: string;
}

export interface ImportSource {
  doi?: string | undefined;
  arxiv?: string | undefined;
  identifiers?: readonly string[] | undefined;
  isbn?: readonly string[] | undefined;
  url?: readonly string[] | undefined;
  records?: string | undefined;
  format?: 'auto' | RecordFormat | undefined;
}

/** Guesses a file's format: JSON, BibTeX entries, RIS tags, else identifiers. */
export function detectFormat(text: string): RecordFormat {
  const t = text.replace(/^\uFEFF/, '').trim();
  if (t.startsWith('[') || t.startsWith('{')) return 'csljson';
  if (/^TY {2}- /m.test(t)) return 'ris';
  if (/@\s*[A-Za-z]+\s*[{(]/.test(t)) return 'bibtex';
  return 'identifiers';
}

const shown = (line: string): string => (line.length > 80 ? `${line.slice(0, 77)}...` : line);

/** An ISBN-shaped text that is no ISBN: its check digit named. */
function badIsbn(line: string, position: number, reason: string): ImportEntry {
  return {
    entry: line,
    position,
    raw: line,
    error: new ZoteusError('validation_error', `'${shown(line)}' is not a valid ISBN: ${reason}.`, {
      hint: 'Copy the ISBN again from the book (the copyright page or the barcode); hyphens and spaces may stay.',
    }),
  };
}

function identifierEntry(line: string, position: number): ImportEntry {
  const identifier = detectIdentifier(line);
  if (identifier) return { entry: line, position, identifier, raw: line };
  const isbn = parseIsbn(line);
  if (isbn && 'error' in isbn) return badIsbn(line, position, isbn.error);
  return {
    entry: line,
    position,
    raw: line,
    error: new ZoteusError(
      'validation_error',
      `'${shown(line)}' is not a DOI, an arXiv id, an ISBN or a web page's URL.`,
      {
        hint: 'One identifier per line: a DOI (10.1234/abc, doi:…, https://doi.org/…), an arXiv id (2101.00001, arXiv:…), an ISBN (978-0-306-40615-7) or an http(s) URL.',
      },
    ),
  };
}

/** One ISBN of the `isbn` list: checked offline, a wrong check digit failing on its own. */
function isbnEntry(text: string, position: number): ImportEntry {
  const line = text.trim();
  const isbn = parseIsbn(line);
  if (isbn && 'isbn' in isbn)
    return { entry: line, position, identifier: { kind: 'isbn', value: isbn.isbn.isbn13 }, raw: line };
  if (isbn) return badIsbn(line, position, isbn.error);
  return {
    entry: line,
    position,
    raw: line,
    error: new ZoteusError('validation_error', `'${shown(line)}' is not an ISBN.`, {
      hint: 'An ISBN has 10 or 13 digits (the ISBN-10 may end in X), e.g. 978-0-306-40615-7 or 0-306-40615-2.',
    }),
  };
}

/** One page of the `url` list: a doi.org or arXiv URL is that identifier; else the page is read. */
function urlEntry(text: string, position: number): ImportEntry {
  const line = text.trim();
  const url = pageUrl(line);
  if (!url) {
    return {
      entry: line,
      position,
      raw: line,
      error: new ZoteusError('validation_error', `'${shown(line)}' is not an http(s) URL.`, {
        hint: 'Give the full address of the page, e.g. https://example.org/article/123 (no user name or password in it).',
      }),
    };
  }
  const known = detectIdentifier(line);
  const identifier: Identifier =
    known && (known.kind === 'doi' || known.kind === 'arxiv') ? known : { kind: 'url', value: url };
  return { entry: line, position, identifier, raw: line };
}

function identifierLines(text: string): ImportEntry[] {
  const entries: ImportEntry[] = [];
  for (const rawLine of text.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('%') || line.startsWith('//')) continue;
    entries.push(identifierEntry(line, entries.length));
  }
  return entries;
}

/** The identifier a record carries (its DOI, else an arXiv id in its fields). */
function recordIdentifier(csl: CslItem): Identifier | undefined {
  const doi = cslText(csl.DOI);
  const parsedDoi = doi ? parseDoi(doi) : undefined;
  if (parsedDoi) return { kind: 'doi', value: parsedDoi };
  const candidates = [cslText(csl.arxiv), cslText(csl.number), cslText(csl.URL)];
  for (const c of candidates) {
    const id = c ? parseArxiv(c) : undefined;
    if (id) return { kind: 'arxiv', value: id };
  }
  return undefined;
}

function recordEntry(csl: CslItem, fallbackLabel: string, raw: string, position: number): ImportEntry {
  const identifier = recordIdentifier(csl);
  const label = identifier
    ? identifier.kind === 'arxiv'
      ? `arXiv:${identifier.value}`
      : identifier.value
    : fallbackLabel;
  const hasTitle = cslText(csl.title) !== undefined;
  if (!hasTitle && identifier) return { entry: label, position, identifier, raw };
  if (!hasTitle) {
    return {
      entry: label,
      position,
      raw,
      error: new ZoteusError(
        'validation_error',
        `Record ${fallbackLabel} has no title and no DOI or arXiv id to look one up.`,
        {
          hint: 'Give the record a title, or a DOI / arXiv id to resolve.',
        },
      ),
    };
  }
  return { entry: label, position, csl, ...(identifier ? { identifier } : {}), raw };
}

/**
 * Records nested beyond the bound both surfaces put on their input (core/input-bounds.ts),
 * refused on the text before a parser builds them.
 */
function tooDeep(format: 'CSL-JSON' | 'BibTeX'): ZoteusError {
  return new ZoteusError(
    'validation_error',
    `The records to import (${format}) are nested deeper than ${MAX_INPUT_DEPTH} levels, more than any citation record; nothing was imported.`,
    {
      field: 'records',
      hint: 'Check that the file is a citation export: its records nest only a few levels deep.',
    },
  );
}

function cslJsonEntries(text: string): ImportEntry[] {
  if (textNestsTooDeep(text, 'json')) throw tooDeep('CSL-JSON');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ZoteusError(
      'validation_error',
      `The CSL-JSON input is not valid JSON (${(error as Error).message}).`,
      {
        field: 'records',
      },
    );
  }
  const list = Array.isArray(parsed)
    ? parsed
    : parsed !== null && typeof parsed === 'object' && Array.isArray((parsed as { items?: unknown }).items)
      ? (parsed as { items: unknown[] }).items
      : [parsed];
  return list.map((item, i) => {
    const raw = JSON.stringify(item);
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      return {
        entry: `csljson:#${i + 1}`,
        position: i,
        raw,
        error: new ZoteusError('validation_error', `CSL-JSON item ${i + 1} is not an object.`),
      };
    }
    const csl = item as CslItem;
    const id = cslText(csl.id);
    return recordEntry(csl, id ? `csljson:${id}` : `csljson:#${i + 1}`, raw, i);
  });
}

/** Parses a file's text in a given (or detected) format into entries. */
export function parseRecords(
  text: string,
  format: 'auto' | RecordFormat = 'auto',
): { format: RecordFormat; entries: ImportEntry[] } {
  const chosen = format === 'auto' ? detectFormat(text) : format;
  let entries: ImportEntry[];
  switch (chosen) {
    case 'identifiers':
      entries = identifierLines(text);
      break;
    case 'csljson':
      entries = cslJsonEntries(text);
      break;
    case 'bibtex':
      if (textNestsTooDeep(text, 'bibtex')) throw tooDeep('BibTeX');
      entries = parseBibtex(text).map((e, i) =>
        recordEntry(bibtexToCsl(e), `bibtex:${e.citekey || `#${i + 1}`}`, e.raw, i),
      );
      break;
    case 'ris':
      entries = parseRis(text).map((r, i) => {
        const id = r.tags.get('ID')?.[0];
        return recordEntry(risToCsl(r), `ris:${id || `#${i + 1}`}`, r.raw, i);
      });
      break;
  }
  return { format: chosen, entries };
}

export interface SourceEntries {
  source: 'doi' | 'arxiv' | 'identifiers' | 'isbn' | 'url' | 'file';
  format?: RecordFormat;
  entries: ImportEntry[];
}

/** The entries of an import input (exactly one source, which the tool's schema ensures). */
export function entriesOf(input: ImportSource): SourceEntries {
  let out: SourceEntries;
  if (input.doi !== undefined) {
    const doi = parseDoi(input.doi);
    if (!doi) {
      throw new ZoteusError('validation_error', `'${input.doi}' is not a DOI (10.<registrant>/<suffix>).`, {
        field: 'doi',
        hint: 'A DOI looks like 10.1038/nature12373 (doi: and https://doi.org/ prefixes are accepted).',
      });
    }
    out = {
      source: 'doi',
      entries: [
        { entry: input.doi.trim(), position: 0, identifier: { kind: 'doi', value: doi }, raw: input.doi },
      ],
    };
  } else if (input.arxiv !== undefined) {
    const id = parseArxiv(input.arxiv);
    if (!id) {
      throw new ZoteusError('validation_error', `'${input.arxiv}' is not an arXiv id.`, {
        field: 'arxiv',
        hint: 'An arXiv id looks like 2101.00001 (optionally v2) or hep-th/9901001; arXiv: and arxiv.org/abs/ forms are accepted.',
      });
    }
    out = {
      source: 'arxiv',
      entries: [
        {
          entry: input.arxiv.trim(),
          position: 0,
          identifier: { kind: 'arxiv', value: id },
          raw: input.arxiv,
        },
      ],
    };
  } else if (input.identifiers !== undefined) {
    out = {
      source: 'identifiers',
      entries: input.identifiers.map((line, i) => identifierEntry(line.trim(), i)),
    };
  } else if (input.isbn !== undefined) {
    out = { source: 'isbn', entries: input.isbn.map((text, i) => isbnEntry(text, i)) };
  } else if (input.url !== undefined) {
    out = { source: 'url', entries: input.url.map((text, i) => urlEntry(text, i)) };
  } else if (input.records !== undefined) {
    const parsed = parseRecords(input.records, input.format ?? 'auto');
    out = { source: 'file', format: parsed.format, entries: parsed.entries };
  } else {
    throw new ZoteusError(
      'validation_error',
      'Nothing to import: give a DOI, an arXiv id, identifiers or records.',
      {
        hint: `${toolRef('zotero_import', { doi: 'DOI' })}, ${toolRef('zotero_import', { arxiv: 'ID' })} or ${toolRef('zotero_import', { records: 'FILE' })}.`,
      },
    );
  }
  if (out.entries.length === 0) {
    throw new ZoteusError(
      'validation_error',
      `No identifiers or records found in the input${out.format ? ` (read as ${out.format})` : ''}.`,
      {
        field: out.source === 'file' ? 'records' : out.source === 'identifiers' ? 'identifiers' : out.source,
        hint: 'One identifier per line, or a BibTeX, RIS or CSL-JSON file (format may be given explicitly).',
      },
    );
  }
  if (out.entries.length > MAX_ENTRIES) {
    throw new ZoteusError(
      'validation_error',
      `${out.entries.length} entries in one call is more than the ${MAX_ENTRIES} allowed.`,
      {
        field: out.source === 'file' ? 'records' : out.source === 'identifiers' ? 'identifiers' : out.source,
        hint: `Split the input into files of at most ${MAX_ENTRIES} entries.`,
      },
    );
  }
  return out;
}

/** Entries back to text in their format: what a retry of only these entries reads. */
export function serializeEntries(format: RecordFormat, entries: readonly ImportEntry[]): string {
  if (format === 'csljson') return `[${entries.map((e) => e.raw).join(',\n')}]`;
  if (format === 'identifiers') return entries.map((e) => e.raw).join('\n');
  return entries.map((e) => e.raw).join('\n\n');
}
