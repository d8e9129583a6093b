/**
 * A large synthetic library for benchmarks (default 50,000 top-level items and 2,000
 * collections in the user library, plus a group library): seeded, so the same options give
 * the same file. Words follow a skewed distribution, so some query words are common and
 * some rare, as in a real library; a fixed share of titles speak of "sea-level rise", and
 * some creators have accented names, to give the benchmark queries known answers.
 */
import type {
  AnnotationSpec,
  AttachmentSpec,
  BuildSpec,
  CollectionSpec,
  CreatorSpec,
  ItemSpec,
} from '../fixture/builder.js';
import { createRng, type Rng } from '../fixture/random.js';

export interface LargeLibraryOptions {
  /** Top-level items of the user library (default 50,000). */
  items?: number;
  /** Collections of the user library (default 2,000; 100 of them top-level). */
  collections?: number;
  /** Items of the group library (default 1,000). */
  groupItems?: number;
  /** Share of items with a PDF attachment whose full text is indexed (default 0.1). */
  fulltextShare?: number;
  /** Share of items with a PDF attachment (default 0.3; at least fulltextShare). */
  attachmentShare?: number;
  /** Share of PDF attachments with annotations (default 0.1). */
  annotatedShare?: number;
  /**
   * Most annotations on an annotated PDF (default 1: exactly one highlight); above 1, each
   * annotated PDF gets between 1 and this many, highlights, underlines and notes.
   */
  annotationsPerAttachment?: number;
  /**
   * Share of items that also carry automatic tags (type 1, as importers add them) of one or
   * two words from the synthetic vocabulary, so the library's distinct tags grow with its size
   * as real keyword tags do (default 0: only the topic tags, about a thousand names).
   */
  automaticTagShare?: number;
  seed?: number;
}

/** The item-level shares, with their defaults (today's output). */
interface Shares {
  fulltext: number;
  attachment: number;
  annotated: number;
  annotationsPerAttachment: number;
  automaticTags: number;
}

const TOPICS = [
  'climate',
  'ocean',
  'ice',
  'glacier',
  'carbon',
  'aerosol',
  'precipitation',
  'drought',
  'temperature',
  'circulation',
  'monsoon',
  'permafrost',
  'coral',
  'fisheries',
  'biodiversity',
  'forest',
  'soil',
  'river',
  'flood',
  'coastal',
  'urban',
  'energy',
  'policy',
  'economics',
  'adaptation',
  'mitigation',
  'model',
  'simulation',
  'uncertainty',
  'observation',
  'satellite',
  'reanalysis',
  'network',
  'learning',
  'transformer',
  'attention',
  'language',
  'vision',
  'graph',
  'optimization',
  'inference',
  'bayesian',
  'causal',
  'genome',
  'protein',
  'cell',
  'neuron',
  'cognition',
  'memory',
  'education',
];
const QUALIFIERS = [
  'global',
  'regional',
  'long-term',
  'rapid',
  'abrupt',
  'seasonal',
  'spatial',
  'temporal',
  'nonlinear',
  'robust',
  'scalable',
  'efficient',
  'probabilistic',
  'empirical',
  'theoretical',
  'comparative',
  'historical',
  'future',
  'multi-scale',
  'high-resolution',
];
const FRAMES = [
  'A study of',
  'Towards',
  'On the',
  'Rethinking',
  'Evidence for',
  'Constraints on',
  'Quantifying',
  'Modelling',
  'The role of',
  'Understanding',
  'Trends in',
  'Drivers of',
];
const FIRST = [
  'Anna',
  'Ben',
  'Chloé',
  'David',
  'Elif',
  'Fatima',
  'Gustav',
  'Hannah',
  'Ivan',
  'Jürgen',
  'Kenji',
  'Lena',
  'María',
  'Nils',
  'Olga',
  'Pierre',
  'Qing',
  'Rahul',
  'Søren',
  'Tomás',
  'Uma',
  'Vera',
  'Wei',
  'Xavier',
  'Yusuf',
  'Zoë',
];
const LAST = [
  'Smith',
  'Müller',
  'García',
  'Nguyen',
  'Kowalski',
  'Østergaard',
  'Tanaka',
  'Rossi',
  'Dubois',
  'Ivanov',
  'Kim',
  'Silva',
  'Jensen',
  'Novák',
  'Öztürk',
  'Hernández',
  'Wang',
  'Lindqvist',
  'Papadopoulos',
  'Fernández',
  'Łukasiewicz',
  'Brown',
  'Chen',
  'Singh',
  'Okafor',
  'Andersson',
  'Schmidt',
  'Costa',
  'Yilmaz',
  'Kovačević',
];
const JOURNALS = [
  'Nature',
  'Science',
  'Journal of Climate',
  'Geophysical Research Letters',
  'Nature Climate Change',
  'Journal of Machine Learning Research',
  'Neural Computation',
  'PLOS ONE',
  'Ocean Science',
  'The Cryosphere',
  'Annual Review of Ecology',
  'Global Environmental Change',
];
const PUBLISHERS = [
  'MIT Press',
  'Springer',
  'Cambridge University Press',
  'Elsevier',
  'Wiley',
  'Oxford University Press',
];

/** A synthetic vocabulary of pronounceable words, drawn with a skew (few common, many rare). */
function vocabulary(rng: Rng, size: number): string[] {
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ne',
    'ru',
    'sa',
    'ti',
    'vo',
    'ze',
    'pra',
    'stro',
    'gle',
    'dun',
    'mar',
    'fel',
    'qui',
    'bor',
    'hen',
  ];
  const words = new Set<string>();
  while (words.size < size) {
    const n = rng.int(2, 4);
    let w = '';
    for (let i = 0; i < n; i++) w += rng.pick(syllables);
    words.add(w);
  }
  return [...words];
}

function skewed<T>(rng: Rng, list: readonly T[]): T {
  const r = rng.next();
  return list[Math.floor(r * r * list.length)]!;
}

function sentence(rng: Rng, vocab: readonly string[], words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(rng.next() < 0.3 ? skewed(rng, TOPICS) : skewed(rng, vocab));
  return out.join(' ');
}

function creators(rng: Rng): CreatorSpec[] {
  const n = rng.next() < 0.05 ? 1 : rng.int(1, 6);
  const out: CreatorSpec[] = [];
  for (let i = 0; i < n; i++) {
    if (rng.next() < 0.03) out.push({ name: `${rng.pick(TOPICS)} consortium` });
    else out.push({ firstName: rng.pick(FIRST), lastName: rng.pick(LAST) });
  }
  return out;
}

function isoDay(rng: Rng, fromYear: number, toYear: number): string {
  const y = rng.int(fromYear, toYear);
  const m = String(rng.int(1, 12)).padStart(2, '0');
  const d = String(rng.int(1, 28)).padStart(2, '0');
  return `${y}-${m}-${d}`;
}

function makeItem(
  rng: Rng,
  vocab: readonly string[],
  collectionKeys: readonly string[],
  shares: Shares,
): ItemSpec {
  const r = rng.next();
  const itemType =
    r < 0.55
      ? 'journalArticle'
      : r < 0.65
        ? 'book'
        : r < 0.75
          ? 'bookSection'
          : r < 0.87
            ? 'conferencePaper'
            : r < 0.91
              ? 'thesis'
              : r < 0.96
                ? 'webpage'
                : 'report';
  const title =
    rng.next() < 0.02
      ? `Sea-level rise and ${skewed(rng, TOPICS)}: ${sentence(rng, vocab, 3)}`
      : `${rng.pick(FRAMES)} ${rng.pick(QUALIFIERS)} ${skewed(rng, TOPICS)} ${sentence(rng, vocab, rng.int(2, 7))}`;
  const year = rng.int(1950, 2025);
  const fields: Record<string, string> = {
    title,
    abstractNote: sentence(rng, vocab, rng.int(60, 160)),
    date: rng.next() < 0.5 ? String(year) : isoDay(rng, year, year),
  };
  if (itemType === 'journalArticle') {
    fields.publicationTitle = rng.pick(JOURNALS);
    fields.volume = String(rng.int(1, 600));
    fields.pages = `${rng.int(1, 900)}-${rng.int(901, 1200)}`;
    fields.DOI = `10.${rng.int(1000, 9999)}/${rng.key().toLowerCase()}`;
  } else if (itemType === 'book' || itemType === 'bookSection') {
    fields.publisher = rng.pick(PUBLISHERS);
    if (itemType === 'bookSection') fields.publicationTitle = `Handbook of ${skewed(rng, TOPICS)}`;
  } else if (itemType === 'conferencePaper') {
    fields.proceedingsTitle = `Proceedings of the ${rng.int(1, 40)}th conference on ${skewed(rng, TOPICS)}`;
  } else if (itemType === 'thesis') {
    fields.university = `University of ${rng.pick(LAST)}`;
  } else if (itemType === 'webpage') {
    fields.url = `https://example.org/${rng.key().toLowerCase()}`;
  } else {
    fields.institution = `${rng.pick(LAST)} Institute`;
  }
  const tags: string[] = [];
  for (let i = rng.int(0, 5); i > 0; i--)
    tags.push(`${skewed(rng, TOPICS)}${rng.next() < 0.5 ? '' : ` ${rng.pick(QUALIFIERS)}`}`);
  const collections = new Set<string>();
  for (let i = rng.int(0, 3); i > 0; i--) collections.add(rng.pick(collectionKeys));
  const added = `${isoDay(rng, 2015, 2024)}T${String(rng.int(0, 23)).padStart(2, '0')}:${String(rng.int(0, 59)).padStart(2, '0')}:00Z`;
  const item: ItemSpec = {
    itemType,
    fields,
    creators: creators(rng),
    tags: [...new Set(tags)],
    collections: [...collections],
    dateAdded: added,
    version: rng.int(1, 100_000),
  };
  if (rng.next() < 0.01) item.deleted = true;
  if (rng.next() < 0.15) item.notes = [`<p>${sentence(rng, vocab, rng.int(10, 80))}</p>`];
  if (rng.next() < shares.attachment) {
    const attachment: AttachmentSpec = {
      title: 'Full Text PDF',
      filename: `${rng.key()}.pdf`,
      contentType: 'application/pdf',
    };
    if (rng.next() < shares.fulltext / shares.attachment) {
      attachment.fulltext = {
        content: sentence(rng, vocab, rng.int(150, 400)),
        indexedPages: 10,
        totalPages: 10,
      };
    }
    if (rng.next() < shares.annotated) {
      attachment.annotations = [
        { type: 'highlight', text: sentence(rng, vocab, 8), comment: sentence(rng, vocab, 4) },
      ];
      // Only drawn when asked for, so the default draws stay today's.
      if (shares.annotationsPerAttachment > 1)
        for (let i = rng.int(1, shares.annotationsPerAttachment) - 1; i > 0; i--)
          attachment.annotations.push(annotation(rng, vocab, attachment.annotations.length));
    }
    item.attachments = [attachment];
  }
  if (shares.automaticTags > 0 && rng.next() < shares.automaticTags) {
    const names = new Set(item.tags!.map((t) => (typeof t === 'string' ? t : t.tag)));
    for (let i = rng.int(1, 4); i > 0; i--) {
      const name = rng.next() < 0.5 ? skewed(rng, vocab) : `${skewed(rng, vocab)} ${skewed(rng, vocab)}`;
      if (!names.has(name)) {
        names.add(name);
        item.tags!.push({ tag: name, type: 1 });
      }
    }
  }
  return item;
}

/** One more annotation of an annotated PDF: a highlight, an underline or a note, on a page. */
function annotation(rng: Rng, vocab: readonly string[], n: number): AnnotationSpec {
  const r = rng.next();
  const page = rng.int(1, 30);
  const sortIndex = `${String(page - 1).padStart(5, '0')}|${String(n * 100).padStart(6, '0')}|00000`;
  if (r < 0.2)
    return {
      type: 'note',
      comment: sentence(rng, vocab, rng.int(5, 25)),
      pageLabel: String(page),
      sortIndex,
    };
  return {
    type: r < 0.8 ? 'highlight' : 'underline',
    text: sentence(rng, vocab, rng.int(6, 30)),
    ...(rng.next() < 0.3 ? { comment: sentence(rng, vocab, rng.int(3, 12)) } : {}),
    pageLabel: String(page),
    sortIndex,
  };
}

function collectionTree(rng: Rng, count: number, prefix: string): { tree: CollectionSpec[]; keys: string[] } {
  const tops = Math.min(count, Math.max(1, Math.round(count / 20)));
  const all: CollectionSpec[] = [];
  const tree: CollectionSpec[] = [];
  const keys: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < count; i++) {
    let key: string;
    do key = rng.key();
    while (seen.has(key));
    seen.add(key);
    keys.push(key);
    const c: CollectionSpec = {
      key,
      name: `${prefix} ${skewed(rng, TOPICS)} ${i}`,
      version: rng.int(1, 100_000),
    };
    if (i < tops) tree.push(c);
    else {
      const parent = all[rng.int(0, all.length - 1)]!;
      (parent.collections ??= []).push(c);
    }
    all.push(c);
  }
  return { tree, keys };
}

/** The large library as a fixture-builder spec. */
export function largeLibrarySpec(options: LargeLibraryOptions = {}): BuildSpec {
  const rng = createRng(options.seed ?? 42);
  const vocab = vocabulary(rng, 6000);
  const attachment = options.attachmentShare ?? 0.3;
  const shares: Shares = {
    fulltext: Math.min(options.fulltextShare ?? 0.1, attachment),
    attachment,
    annotated: options.annotatedShare ?? 0.1,
    annotationsPerAttachment: options.annotationsPerAttachment ?? 1,
    automaticTags: options.automaticTagShare ?? 0,
  };
  const user = collectionTree(rng, options.collections ?? 2000, 'Topic');
  const group = collectionTree(rng, 20, 'Shared');
  const items: ItemSpec[] = [];
  for (let i = 0; i < (options.items ?? 50_000); i++) items.push(makeItem(rng, vocab, user.keys, shares));
  const gItems: ItemSpec[] = [];
  for (let i = 0; i < (options.groupItems ?? 1000); i++)
    gItems.push(makeItem(rng, vocab, group.keys, shares));
  return {
    seed: options.seed ?? 42,
    user: { userID: 424242, username: 'bench-user' },
    writeStorage: false,
    libraries: [
      { type: 'user', collections: user.tree, items },
      { type: 'group', groupID: 90001, name: 'Bench Group', collections: group.tree, items: gItems },
    ],
  };
}
