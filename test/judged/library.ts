/**
 * The library the independent judges read (issue 17, "Judged by"): the dozen items of the export
 * tests (test/core/exports/fixtures.ts) and items of the other types of the CSL-JSON tests
 * (patent, film, interview, presentation, magazine and encyclopedia articles, statute, case,
 * audio recording, standard, blog post, letter), with LaTeX's special characters, Zotero's
 * rich-text markup, acronyms, accented Latin letters, Greek, Cyrillic and Chinese, on the Web API
 * test server. Exported and formatted by the product as a user runs it (`zot export`, `zot cite`).
 */
import { execFileSync } from 'node:child_process';
import type { ItemSeed } from '../support/zotero-server/types.js';
import { startWorld, type World } from '../core/library/world.js';
import { CASES } from '../core/exports/fixtures.js';

const a = (firstName: string, lastName: string, creatorType = 'author') => ({
  creatorType,
  firstName,
  lastName,
});
const o = (name: string, creatorType = 'author') => ({ creatorType, name });

/** Items whose text LaTeX can typeset with pdflatex (Latin scripts, and Greek in ASCII as math). */
export const LATIN_ITEMS: ItemSeed[] = [
  ...CASES.map((c) => {
    const { version: _v, ...data } = c.item.data;
    // The export fixture's ISBN has a wrong check digit, which Biber rightly warns about.
    return (data.ISBN === '978-1-108-00000-1' ? { ...data, ISBN: '978-1-108-00000-0' } : data) as ItemSeed;
  }),
  {
    key: 'SPECIAL2',
    itemType: 'journalArticle',
    title:
      'Why 50% of C# & C++ code_bases use $ signs, {braces}, ~tildes, ^carets, a|b, <tags> and \\ backslashes',
    creators: [a('Émile', 'Zola-Durand'), a('Seán', "O'Brien"), a('Ludwig', 'van Beethoven')],
    publicationTitle: 'Journal of R&D',
    volume: '7',
    issue: '2',
    pages: '1–19',
    date: '2021-02',
  },
  {
    key: 'ACRONYM2',
    itemType: 'journalArticle',
    title:
      'NASA and ESA measure CO<sub>2</sub> uptake by <i>Homo sapiens</i> with LiDAR and DNA probes in the USA',
    creators: [a('Antonín', 'Dvořák'), a('Kurt', 'Gödel'), a('Paul', 'Erdős'), a('Anders', 'Ångström')],
    publicationTitle: 'Proceedings of the IEEE',
    volume: '110',
    pages: '3–4',
    date: '2022',
    DOI: '10.1109/JPROC.2022.0000001',
  },
  {
    key: 'LIGATUR2',
    itemType: 'journalArticle',
    title: 'Straße, œuvre, Æsir and ﬁnal naïve façades in Kraków and Tromsø',
    creators: [a('Martin Luther', 'King'), a('Hans', 'Weiß')],
    publicationTitle: 'Physical Review Letters',
    volume: '99',
    issue: '1',
    pages: '010101',
    date: '2007-07-02',
  },
  {
    key: 'PATENT22',
    itemType: 'patent',
    title: 'Floating barrier',
    creators: [a('Ivy', 'Inventa', 'inventor')],
    place: 'US',
    issuingAuthority: 'USPTO',
    patentNumber: 'US1234567B2',
    filingDate: '2018-04-01',
    issueDate: '2020-07-07',
  },
  {
    key: 'FILMRIS2',
    itemType: 'film',
    title: 'Rising Tide',
    creators: [a('Dana', 'Director', 'director')],
    distributor: 'Ocean Films',
    place: 'Los Angeles',
    date: '1999',
    genre: 'Documentary',
  },
  {
    key: 'INTERVW2',
    itemType: 'interview',
    title: 'On tides and time',
    creators: [a('Ursula', 'Le Guin', 'interviewee'), a('Ira', 'Asker', 'interviewer')],
    interviewMedium: 'Radio',
    date: '1985',
  },
  {
    key: 'PRESENT2',
    itemType: 'presentation',
    title: 'Sea ice in a warming world',
    creators: [a('Pia', 'Presenter', 'presenter')],
    meetingName: 'AGU Fall Meeting 2019',
    place: 'San Francisco',
    presentationType: 'Keynote',
    date: '2019-12-10',
  },
  {
    key: 'MAGAZIN2',
    itemType: 'magazineArticle',
    title: 'The melting north',
    creators: [a('Mary', 'Writer')],
    publicationTitle: 'National Geographic',
    volume: '240',
    issue: '3',
    pages: '40–59',
    date: '2021-09',
  },
  {
    key: 'ENCYCLO2',
    itemType: 'encyclopediaArticle',
    title: 'Glacier',
    creators: [a('Eve', 'Entry'), a('Ed', 'Editor', 'editor')],
    encyclopediaTitle: 'Encyclopædia Britannica',
    edition: '15',
    volume: '5',
    publisher: 'Encyclopædia Britannica, Inc.',
    place: 'Chicago',
    date: '2010',
    pages: '300–302',
  },
  {
    key: 'STATUTE2',
    itemType: 'statute',
    nameOfAct: 'Coastal Protection Act',
    code: 'U.S.C.',
    codeNumber: '33',
    publicLawNumber: '101-1',
    dateEnacted: '1990-10-01',
    section: '5',
  },
  {
    key: 'LEGALCA2',
    itemType: 'case',
    caseName: 'Sea v. Shore',
    court: 'Supreme Court',
    dateDecided: '2001-02-03',
    docketNumber: '00-123',
    reporter: 'U.S.',
    reporterVolume: '531',
    firstPage: '98',
  },
  {
    key: 'AUDIOREC',
    itemType: 'audioRecording',
    title: 'Sea Songs',
    creators: [a('Sal', 'Singer', 'performer')],
    label: 'Deep Records',
    place: 'Liverpool',
    audioRecordingFormat: 'LP',
    date: '1968',
  },
  {
    key: 'STANDAR2',
    itemType: 'standard',
    title: 'Geographic information: Metadata',
    creators: [o('International Organization for Standardization')],
    organization: 'ISO',
    number: '19115-1',
    date: '2014',
    place: 'Geneva',
  },
  {
    key: 'BLOGPOS2',
    itemType: 'blogPost',
    title: 'Ten years of Argo floats',
    creators: [a('Bo', 'Blogger')],
    blogTitle: 'Ocean Notes',
    url: 'https://example.org/argo?x=1&y=2',
    date: '2015-05-20',
  },
  {
    key: 'LETTER22',
    itemType: 'letter',
    title: 'On the mutability of species',
    creators: [a('Charles', 'Darwin'), a('Joseph', 'Hooker', 'recipient')],
    letterType: 'Letter',
    date: '1844-01-11',
  },
];

/** Greek letters: in ASCII LaTeX (BibTeX's default) math that pdflatex typesets, in UTF-8 not. */
export const GREEK_ITEM: ItemSeed = {
  key: 'GREEKTI2',
  itemType: 'journalArticle',
  title: 'β-decay and the α particle',
  creators: [a('Lise', 'Meitner')],
  publicationTitle: 'Zeitschrift für Physik',
  volume: '9',
  pages: '131–144',
  date: '1922',
};

/** Items in scripts pdflatex cannot typeset without extra packages (and an engine for them). */
export const NON_LATIN_ITEMS: ItemSeed[] = [
  {
    key: 'CHINESE2',
    itemType: 'book',
    title: '海平面上升与沿海城市',
    creators: [{ creatorType: 'author', lastName: '王', firstName: '小明' }],
    publisher: '科学出版社',
    place: '北京',
    date: '2018',
    language: 'zh',
  },
  {
    key: 'CYRILLI2',
    itemType: 'journalArticle',
    title: 'Ледники Арктики',
    creators: [a('Иван', 'Петров')],
    publicationTitle: 'Природа',
    volume: '12',
    pages: '5–9',
    date: '2016',
    language: 'ru',
  },
];

export const ALL_ITEMS = [...LATIN_ITEMS, GREEK_ITEM, ...NON_LATIN_ITEMS];

/** A Zotero item key (8 of 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ) from a readable name. */
const zoteroKey = (name: string) => name.replace(/O/g, 'Q').replace(/0/g, '8').replace(/1/g, '9');

/** The Web API test server with `items` in alice's library. */
export async function startJudgedLibrary(items: ItemSeed[]): Promise<World> {
  const world = await startWorld();
  world.server.library('users/1').addItems(items.map((i) => ({ ...i, key: zoteroKey(i.key ?? '') })));
  return world;
}

/** Which of these programs are not on PATH. */
export function missingPrograms(programs: readonly string[]): string[] {
  return programs.filter((program) => {
    try {
      execFileSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * Skip only where the judges are not installed, and never on CI (`.ci/run` installs them): there
 * a missing program is a failure, so that CI cannot pass by skipping.
 */
export function judgeAvailability(programs: readonly string[]): { skip: boolean; missing: string[] } {
  const missing = missingPrograms(programs);
  return { skip: missing.length > 0 && !process.env.CI, missing };
}
