/**
 * RIS records from Zotero items, one per call, as Zotero's RIS export translator writes them
 * (`zotero/citations.md`, "RIS"): `TAG  - value` lines ending in CRLF, `TY` first and
 * `ER  - ` last, the tags in the translator's order, one line per value (each creator, tag,
 * note and PDF).
 *
 * Types: JOUR, BOOK, CHAP, CONF, THES, RPRT, ELEC (web pages), BLOG, NEWS, MGZN, COMP, DATA,
 * STAND, CASE, BILL, STAT, PAT, MAP, SOUND, VIDEO, MPCT, ART, DICT, ENCYC, HEAR, ICOMM, PCOMM,
 * MANSCPT, SLIDE; GEN for any other (preprints, documents).
 *
 * Tags: TI title; AU each creator of the type's main role as "Last, First" (a single-field name
 * as it is), A2/A3/A4 and C2 for editors, series editors, translators and book authors as the
 * translator maps them; T2 the publication (journal, book, proceedings, website…), T3 the
 * series; AB abstract; CY place; DA the date as `YYYY/MM/DD/` and PY its year; DO DOI (from
 * Extra when the item has no DOI field); ET edition; VL volume; IS issue; SP/EP the first and
 * last page (SP the number of pages for books and theses); J2 journal abbreviation; LA
 * language; M3 the item's type of work; PB publisher (university, institution…); SN ISBN or
 * ISSN (report number, patent number); ST short title; UR URL; Y2 the access date; L1 each PDF
 * given; N1 each child note given (as Zotero stores it); KW each tag.
 */
import { strToDate, type DateOptions } from '../citations/dates.js';
import { parseExtraFields } from '../citations/extra.js';
import { fieldFor, type ItemSchema } from '../items/schema.js';
import type { WebApiItem } from '../local/sqlite/types.js';
import { isExportable, type ExportChildren } from './bibtex.js';

export interface RisOptions {
  schema: ItemSchema;
  /** How two-digit years are read (dates.ts). */
  dates?: DateOptions;
}

/** Written between two records of one file (each record ends with its `ER` line). */
export const RIS_RECORD_SEPARATOR = '\r\n';

const TYPES: Readonly<Record<string, string>> = {
  artwork: 'ART',
  audioRecording: 'SOUND',
  bill: 'BILL',
  blogPost: 'BLOG',
  book: 'BOOK',
  bookSection: 'CHAP',
  case: 'CASE',
  computerProgram: 'COMP',
  conferencePaper: 'CONF',
  dataset: 'DATA',
  dictionaryEntry: 'DICT',
  encyclopediaArticle: 'ENCYC',
  email: 'ICOMM',
  film: 'MPCT',
  hearing: 'HEAR',
  journalArticle: 'JOUR',
  letter: 'PCOMM',
  magazineArticle: 'MGZN',
  manuscript: 'MANSCPT',
  map: 'MAP',
  newspaperArticle: 'NEWS',
  patent: 'PAT',
  presentation: 'SLIDE',
  report: 'RPRT',
  standard: 'STAND',
  statute: 'STAT',
  thesis: 'THES',
  videoRecording: 'VIDEO',
  webpage: 'ELEC',
  interview: 'PCOMM',
  instantMessage: 'ICOMM',
  forumPost: 'ICOMM',
  tvBroadcast: 'MPCT',
  radioBroadcast: 'SOUND',
  podcast: 'SOUND',
};

/** `default`: the field for any type not named; `types`: a field for the types listed; `exclude`: no default for these. */
interface TagMap {
  default?: string;
  types?: Readonly<Record<string, readonly string[]>>;
  exclude?: readonly string[];
}

/** The translator's tag ↔ field map (export side). `creators/<type>`, `notes`, `tags`, `attachments/PDF` are special. */
const TAGS: Readonly<Record<string, TagMap>> = {
  TI: { default: 'title', types: { subject: ['email'], caseName: ['case'], nameOfAct: ['statute'] } },
  AU: {
    default: 'creators/author',
    types: {
      'creators/artist': ['artwork'],
      'creators/cartographer': ['map'],
      'creators/composer': ['audioRecording'],
      'creators/director': ['film', 'radioBroadcast', 'tvBroadcast', 'videoRecording'],
      'creators/interviewee': ['interview'],
      'creators/inventor': ['patent'],
      'creators/podcaster': ['podcast'],
      'creators/programmer': ['computerProgram'],
    },
  },
  T2: {
    types: {
      code: ['bill', 'statute'],
      bookTitle: ['bookSection'],
      blogTitle: ['blogPost'],
      conferenceName: ['conferencePaper'],
      dictionaryTitle: ['dictionaryEntry'],
      encyclopediaTitle: ['encyclopediaArticle'],
      committee: ['hearing'],
      forumTitle: ['forumPost'],
      websiteTitle: ['webpage'],
      programTitle: ['radioBroadcast', 'tvBroadcast'],
      meetingName: ['presentation'],
      seriesTitle: ['computerProgram', 'map', 'report'],
      series: ['book'],
      publicationTitle: ['journalArticle', 'magazineArticle', 'newspaperArticle'],
    },
  },
  A2: {
    types: {
      'creators/sponsor': ['bill'],
      'creators/performer': ['audioRecording'],
      'creators/presenter': ['presentation'],
      'creators/interviewer': ['interview'],
      'creators/editor': [
        'journalArticle',
        'bookSection',
        'conferencePaper',
        'dictionaryEntry',
        'document',
        'encyclopediaArticle',
      ],
      'creators/seriesEditor': ['book', 'report'],
      'creators/recipient': ['email', 'instantMessage', 'letter'],
      reporter: ['case'],
      issuingAuthority: ['patent'],
    },
  },
  T3: {
    types: {
      legislativeBody: ['hearing', 'bill'],
      series: ['bookSection', 'conferencePaper', 'journalArticle'],
      seriesTitle: ['audioRecording'],
    },
  },
  A3: {
    types: {
      'creators/cosponsor': ['bill'],
      'creators/producer': ['film', 'tvBroadcast', 'videoRecording', 'radioBroadcast'],
      'creators/editor': ['book'],
      'creators/seriesEditor': [
        'bookSection',
        'conferencePaper',
        'dictionaryEntry',
        'encyclopediaArticle',
        'map',
      ],
    },
  },
  A4: {
    default: 'creators/translator',
    types: { 'creators/counsel': ['case'], 'creators/contributor': ['conferencePaper', 'film'] },
  },
  AB: { default: 'abstractNote' },
  C1: {
    types: {
      filingDate: ['patent'],
      'creators/castMember': ['radioBroadcast', 'tvBroadcast', 'videoRecording'],
      scale: ['map'],
      place: ['conferencePaper'],
    },
  },
  C2: {
    types: {
      issueDate: ['patent'],
      'creators/bookAuthor': ['bookSection'],
      'creators/commenter': ['blogPost'],
    },
  },
  C3: { types: { artworkSize: ['artwork'], proceedingsTitle: ['conferencePaper'], country: ['patent'] } },
  C4: {
    types: { 'creators/wordsBy': ['audioRecording'], 'creators/attorneyAgent': ['patent'], genre: ['film'] },
  },
  C5: {
    types: {
      references: ['patent'],
      audioRecordingFormat: ['audioRecording', 'radioBroadcast'],
      videoRecordingFormat: ['film', 'tvBroadcast', 'videoRecording'],
    },
  },
  C6: { types: { legalStatus: ['patent'] } },
  CN: { default: 'callNumber' },
  CY: { default: 'place', exclude: ['conferencePaper'] },
  DA: { default: 'date', types: { dateEnacted: ['statute'], dateDecided: ['case'], issueDate: ['patent'] } },
  PY: { default: 'date', types: { dateEnacted: ['statute'], dateDecided: ['case'], issueDate: ['patent'] } },
  DO: { default: 'DOI' },
  DP: { default: 'libraryCatalog' },
  ET: {
    default: 'edition',
    types: { session: ['bill', 'hearing', 'statute'], versionNumber: ['computerProgram'] },
  },
  VL: {
    default: 'volume',
    types: { codeNumber: ['statute'], codeVolume: ['bill'], reporterVolume: ['case'] },
    exclude: ['patent', 'webpage'],
  },
  IS: { default: 'issue', types: { numberOfVolumes: ['bookSection'] } },
  SP: {
    default: 'pages',
    types: {
      codePages: ['bill'],
      numPages: ['book', 'thesis', 'manuscript'],
      firstPage: ['case'],
      runningTime: ['film'],
    },
  },
  J2: { default: 'journalAbbreviation' },
  LA: { default: 'language', types: { programmingLanguage: ['computerProgram'] } },
  M1: {
    types: {
      seriesNumber: ['book'],
      billNumber: ['bill'],
      system: ['computerProgram'],
      documentNumber: ['hearing'],
      applicationNumber: ['patent'],
      publicLawNumber: ['statute'],
      episodeNumber: ['podcast', 'radioBroadcast', 'tvBroadcast'],
    },
  },
  M3: {
    types: {
      manuscriptType: ['manuscript'],
      mapType: ['map'],
      reportType: ['report'],
      thesisType: ['thesis'],
      websiteType: ['blogPost', 'webpage'],
      postType: ['forumPost'],
      letterType: ['letter'],
      interviewMedium: ['interview'],
      presentationType: ['presentation'],
      artworkMedium: ['artwork'],
      audioFileType: ['podcast'],
    },
  },
  NV: { default: 'numberOfVolumes', exclude: ['bookSection'] },
  OP: { types: { history: ['hearing', 'statute', 'bill', 'case'], priorityNumbers: ['patent'] } },
  PB: {
    default: 'publisher',
    types: {
      label: ['audioRecording'],
      court: ['case'],
      distributor: ['film'],
      assignee: ['patent'],
      institution: ['report'],
      university: ['thesis'],
      company: ['computerProgram'],
      studio: ['videoRecording'],
      network: ['radioBroadcast', 'tvBroadcast'],
    },
  },
  SE: { default: 'section', exclude: ['case'] },
  SN: {
    default: 'ISBN',
    types: {
      ISSN: ['journalArticle', 'magazineArticle', 'newspaperArticle'],
      patentNumber: ['patent'],
      reportNumber: ['report'],
    },
  },
  ST: { default: 'shortTitle' },
  SV: { types: { seriesNumber: ['bookSection'], docketNumber: ['case'] } },
  UR: { default: 'url' },
  AN: { default: 'archiveLocation' },
  DB: { default: 'archive' },
  Y2: { default: 'accessDate' },
  L1: { default: 'attachments/PDF' },
  N1: { default: 'notes' },
  KW: { default: 'tags' },
};

const ORDER = [
  'TI',
  'AU',
  'T2',
  'A2',
  'T3',
  'A3',
  'A4',
  'AB',
  'C1',
  'C2',
  'C3',
  'C4',
  'C5',
  'C6',
  'CN',
  'CY',
  'DA',
  'PY',
  'DO',
  'DP',
  'ET',
  'VL',
  'IS',
  'SP',
  'J2',
  'LA',
  'M1',
  'M3',
  'NV',
  'OP',
  'PB',
  'SE',
  'SN',
  'ST',
  'SV',
  'UR',
  'AN',
  'DB',
  'Y2',
  'L1',
  'N1',
  'KW',
];
/** Bills keep sponsors (A2) and cosponsors (A3) together. */
const BILL_ORDER = ORDER.filter((t) => t !== 'T3').flatMap((t) => (t === 'A3' ? ['A3', 'T3'] : [t]));

const fieldCache = new Map<string, string | undefined>();

/** The field a tag stands for in one item type (the translator's TagMapper). */
function fieldOf(itemType: string, tag: string): string | undefined {
  const cacheKey = `${itemType}\u0000${tag}`;
  if (fieldCache.has(cacheKey)) return fieldCache.get(cacheKey);
  const map = TAGS[tag];
  let field: string | undefined;
  if (map) {
    for (const [name, types] of Object.entries(map.types ?? {})) {
      if (types.includes(itemType)) {
        field = name;
        break;
      }
    }
    if (!field && map.default && !map.exclude?.includes(itemType)) field = map.default;
  }
  fieldCache.set(cacheKey, field);
  return field;
}

const pad = (n: number | undefined, width: number): string =>
  n === undefined ? '' : String(n).padStart(width, '0');

/** `YYYY/MM/DD/part` (RIS DA and Y2), empty parts left empty; the text itself when it has no year. */
function risDate(raw: string, dates: DateOptions | undefined): string {
  const d = strToDate(raw, dates);
  if (d.year === undefined) return raw;
  return `${pad(d.year, 4)}/${pad(d.month, 2)}/${pad(d.day, 2)}/${d.part ?? ''}`;
}

/** One line per value (values trimmed, empty ones left out); line breaks inside a value as CRLF. */
function lines(tag: string, values: readonly string[]): string {
  let out = '';
  for (const value of values) {
    const v = value.trim();
    if (v) out += `${tag}  - ${v.replace(/\r\n?|\n/g, '\r\n')}\r\n`;
  }
  return out;
}

/** One RIS record for a Zotero item, ending with its `ER` line. Throws for notes, attachments, annotations. */
export function risRecord(item: WebApiItem, options: RisOptions, children: ExportChildren = {}): string {
  if (!isExportable(item)) throw new Error(`A ${item.data.itemType} item (${item.key}) has no RIS record.`);
  const data = item.data;
  const type = data.itemType;
  const get = (name: string): string => {
    const value = data[fieldFor(options.schema, type, name) ?? name];
    if (typeof value === 'string') return value.trim();
    return typeof value === 'number' ? String(value) : '';
  };
  let out = `TY  - ${TYPES[type] ?? 'GEN'}\r\n`;
  for (const tag of type === 'bill' ? BILL_ORDER : ORDER) {
    const field = fieldOf(type, tag);
    if (!field) continue;
    if (field.startsWith('creators/')) {
      const role = field.slice('creators/'.length);
      const names = (data.creators ?? [])
        .filter((c) => c.creatorType === role)
        .map((c) =>
          'name' in c ? c.name : [c.lastName, c.firstName].filter((p) => p && p.trim()).join(', '),
        );
      out += lines(tag, names);
      continue;
    }
    switch (field) {
      case 'tags':
        out += lines(
          tag,
          (data.tags ?? []).map((t) => t.tag),
        );
        continue;
      case 'notes':
        out += lines(tag, children.notes ?? []);
        continue;
      case 'attachments/PDF':
        out += lines(
          tag,
          (children.attachments ?? []).filter((a) => a.contentType === 'application/pdf').map((a) => a.path),
        );
        continue;
      case 'DOI':
        out += lines(tag, [get('DOI') || extraValue(get('extra'), 'DOI')]);
        continue;
    }
    const value = get(field);
    if (!value) continue;
    if (tag === 'SP' && field === 'pages') {
      const m = /^(.+?)[\u002d\u00ad\u2010-\u2015\u2212\u2e3a\u2e3b\s]+(.+)$/.exec(value);
      out += m ? lines('SP', [m[1] as string]) + lines('EP', [m[2] as string]) : lines('SP', [value]);
    } else if (tag === 'PY') {
      const year = strToDate(value, options.dates).year;
      out += lines(tag, [year !== undefined ? pad(year, 4) : value]);
    } else if (tag === 'DA' || tag === 'Y2') {
      out += lines(tag, [risDate(tag === 'Y2' ? accessDay(value) : value, options.dates)]);
    } else {
      out += lines(tag, [value]);
    }
  }
  return `${out}ER  - \r\n`;
}

/** The value of Extra's first `label:` line, or ''. */
function extraValue(extra: string, label: string): string {
  if (!extra) return '';
  return parseExtraFields(extra).find((f) => f.field === label && f.value)?.value ?? '';
}

/** An access date's day (UTC, as stored): `2020-01-02T03:04:05Z` → `2020-01-02`. */
function accessDay(raw: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})[T ]\d{2}:\d{2}/.exec(raw);
  return m ? (m[1] as string) : raw;
}
