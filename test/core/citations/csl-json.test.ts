/**
 * Zotero item → CSL-JSON: items of twenty item types mapped field by field (the expected JSON
 * worked out from schema.json's `csl` section and Zotero's rules, not captured from the code),
 * names (single-field, particles, suffixes, quoted family names, Chinese, Japanese, Cyrillic),
 * the item URI, and citeproc-js taking every one of them into an APA bibliography.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { cslName, itemUri, parseParticles, toCslJson } from '../../../src/core/citations/csl-json.js';
import type { CslItem } from '../../../src/core/citations/csl-types.js';
import { buildSchema, readBundledSchema } from '../../../src/core/items/schema.js';
import type { WebApiCreator, WebApiItem } from '../../../src/core/local/sqlite/types.js';

const schema = buildSchema(readBundledSchema(), 'bundled');
const USER = 8675309;

function item(
  key: string,
  itemType: string,
  fields: Record<string, string>,
  creators: WebApiCreator[] = [],
  library: WebApiItem['library'] = { type: 'user', id: USER, name: 'My Library' },
): WebApiItem {
  return {
    key,
    version: 7,
    library,
    meta: {},
    data: {
      key,
      version: 7,
      itemType,
      creators,
      tags: [],
      collections: [],
      relations: {},
      dateAdded: '2024-01-01T00:00:00Z',
      dateModified: '2024-01-02T00:00:00Z',
      ...fields,
    },
  };
}

const person = (creatorType: string, lastName: string, firstName: string): WebApiCreator => ({
  creatorType,
  lastName,
  firstName,
});
const org = (creatorType: string, name: string): WebApiCreator => ({ creatorType, name });
const uri = (key: string) => `http://zotero.org/users/${USER}/items/${key}`;

/** [item, the CSL-JSON Zotero's mapping gives for it]. */
const CASES: Array<[string, WebApiItem, CslItem]> = [
  [
    'journalArticle: several authors, an institution, editor, Chinese translator, Extra PMID',
    item(
      'JOUR2345',
      'journalArticle',
      {
        title: 'Sea-level rise and coastal flooding',
        abstractNote: 'We project flooding.',
        publicationTitle: 'Nature Climate Change',
        journalAbbreviation: 'Nat. Clim. Change',
        volume: '12',
        issue: '3',
        pages: '201-210',
        date: '2022-03-15',
        DOI: '10.1038/s41558-022-01234-5',
        ISSN: '1758-678X',
        url: 'https://doi.org/10.1038/s41558-022-01234-5',
        accessDate: '2023-01-10T12:00:00Z',
        language: 'en',
        shortTitle: 'Sea-level rise',
        libraryCatalog: 'www.nature.com',
        series: 'Not used: seriesTitle comes first',
        seriesTitle: 'Climate series',
        extra: 'PMID: 35000000',
      },
      [
        person('author', 'Smith', 'Jane A.'),
        person('author', 'van der Berg', 'Pieter'),
        org('author', 'IPCC Working Group I'),
        person('editor', 'Doe', 'John'),
        person('translator', '李', '小龙'),
        person('reviewedAuthor', 'Critic', 'Carla'),
      ],
    ),
    {
      id: uri('JOUR2345'),
      type: 'article-journal',
      title: 'Sea-level rise and coastal flooding',
      abstract: 'We project flooding.',
      'container-title': 'Nature Climate Change',
      journalAbbreviation: 'Nat. Clim. Change',
      volume: '12',
      issue: '3',
      page: '201-210',
      DOI: '10.1038/s41558-022-01234-5',
      ISSN: '1758-678X',
      URL: 'https://doi.org/10.1038/s41558-022-01234-5',
      language: 'en',
      'title-short': 'Sea-level rise',
      source: 'www.nature.com',
      'collection-title': 'Climate series',
      PMID: '35000000',
      author: [
        { family: 'Smith', given: 'Jane A.' },
        { family: 'Berg', given: 'Pieter', 'non-dropping-particle': 'van der' },
        { literal: 'IPCC Working Group I' },
      ],
      editor: [{ family: 'Doe', given: 'John' }],
      translator: [{ family: '李', given: '小龙' }],
      'reviewed-author': [{ family: 'Critic', given: 'Carla' }],
      issued: { 'date-parts': [[2022, 3, 15]] },
      accessed: { 'date-parts': [[2023, 1, 10]] },
    },
  ],
  [
    'book: series, editions, original publication, first ISBN only, rights, season, Cyrillic editor',
    item(
      'BOOK2345',
      'book',
      {
        title: 'The Ocean and Cryosphere',
        series: 'Climate Studies',
        seriesNumber: '4',
        volume: '2',
        numberOfVolumes: '3',
        edition: '2',
        date: 'Summer 2019',
        publisher: 'Springer',
        place: 'Berlin',
        originalDate: '1990',
        originalPublisher: 'Old Press',
        originalPlace: 'London',
        format: 'Hardcover',
        numPages: '350',
        ISBN: '978-3-16-148410-0 0-306-40615-2',
        rights: 'CC BY 4.0',
        callNumber: 'GC21 .O24',
        archive: 'State Library',
        archiveLocation: 'Box 4',
      },
      [
        person('author', 'Beethoven', 'Ludwig van'),
        person('editor', 'Толстой', 'Лев Николаевич'),
        person('seriesEditor', 'Series', 'Sam'),
        person('translator', 'Trans', 'Tina'),
        person('contributor', 'Helper', 'Hal'),
      ],
    ),
    {
      id: uri('BOOK2345'),
      type: 'book',
      title: 'The Ocean and Cryosphere',
      'collection-title': 'Climate Studies',
      'collection-number': '4',
      volume: '2',
      'number-of-volumes': '3',
      edition: '2',
      publisher: 'Springer',
      'publisher-place': 'Berlin',
      'original-publisher': 'Old Press',
      'original-publisher-place': 'London',
      medium: 'Hardcover',
      'number-of-pages': '350',
      ISBN: '978-3-16-148410-0',
      license: 'CC BY 4.0',
      'call-number': 'GC21 .O24',
      archive: 'State Library',
      archive_location: 'Box 4',
      author: [{ family: 'Beethoven', given: 'Ludwig', 'dropping-particle': 'van' }],
      editor: [{ family: 'Толстой', given: 'Лев Николаевич' }],
      'collection-editor': [{ family: 'Series', given: 'Sam' }],
      translator: [{ family: 'Trans', given: 'Tina' }],
      contributor: [{ family: 'Helper', given: 'Hal' }],
      issued: { 'date-parts': [[2019]], season: 'Summer' },
      'original-date': { 'date-parts': [[1990]] },
    },
  ],
  [
    'bookSection: bookAuthor → container-author, two editors, book title → container-title',
    item(
      'CHAP2345',
      'bookSection',
      {
        title: 'Ice sheets',
        bookTitle: 'Handbook of Glaciology',
        pages: '33–47',
        date: '2020',
        publisher: 'Academic Press',
        place: 'Oxford',
      },
      [
        person('author', 'Ng', 'Alice'),
        person('bookAuthor', 'Major', 'Mary'),
        person('editor', 'One', 'Ed'),
        person('editor', 'Two', 'Edna'),
      ],
    ),
    {
      id: uri('CHAP2345'),
      type: 'chapter',
      title: 'Ice sheets',
      'container-title': 'Handbook of Glaciology',
      page: '33–47',
      publisher: 'Academic Press',
      'publisher-place': 'Oxford',
      author: [{ family: 'Ng', given: 'Alice' }],
      'container-author': [{ family: 'Major', given: 'Mary' }],
      editor: [
        { family: 'One', given: 'Ed' },
        { family: 'Two', given: 'Edna' },
      ],
      issued: { 'date-parts': [[2020]] },
    },
  ],
  [
    'conferencePaper: proceedings, conference name, event place, an EDTF date range, a Japanese author',
    item(
      'CONF2345',
      'conferencePaper',
      {
        title: 'Tidal gauges revisited',
        proceedingsTitle: 'Proceedings of the Coastal Conference',
        conferenceName: 'Coastal 2021',
        place: 'New York',
        eventPlace: 'Kyoto',
        publisher: 'ACM',
        date: '2021-06-01/2021-06-04',
        DOI: '10.1145/1234567',
      },
      [person('author', '村上', '春樹'), person('seriesEditor', 'Editor', 'Serie')],
    ),
    {
      id: uri('CONF2345'),
      type: 'paper-conference',
      title: 'Tidal gauges revisited',
      'container-title': 'Proceedings of the Coastal Conference',
      'event-title': 'Coastal 2021',
      'publisher-place': 'New York',
      'event-place': 'Kyoto',
      publisher: 'ACM',
      DOI: '10.1145/1234567',
      author: [{ family: '村上', given: '春樹' }],
      'collection-editor': [{ family: 'Editor', given: 'Serie' }],
      issued: {
        'date-parts': [
          [2021, 6, 1],
          [2021, 6, 4],
        ],
      },
    },
  ],
  [
    'thesis: type → genre, university → publisher, month and year',
    item('THES2345', 'thesis', {
      title: 'Storm surges',
      thesisType: 'PhD dissertation',
      university: 'Utrecht University',
      place: 'Utrecht',
      numPages: '212',
      date: 'May 2018',
    }),
    {
      id: uri('THES2345'),
      type: 'thesis',
      title: 'Storm surges',
      genre: 'PhD dissertation',
      publisher: 'Utrecht University',
      'publisher-place': 'Utrecht',
      'number-of-pages': '212',
      issued: { 'date-parts': [[2018, 5]] },
    },
  ],
  [
    'report: number, type, institution, series; an organisation as author; circa',
    item(
      'REPT2345',
      'report',
      {
        title: 'Global climate 1950–1975',
        reportNumber: 'TR-42',
        reportType: 'Technical report',
        institution: 'WMO',
        place: 'Geneva',
        seriesTitle: 'WMO Reports',
        pages: '1-80',
        date: 'ca. 1975',
      },
      [org('author', 'World Meteorological Organization')],
    ),
    {
      id: uri('REPT2345'),
      type: 'report',
      title: 'Global climate 1950–1975',
      number: 'TR-42',
      genre: 'Technical report',
      publisher: 'WMO',
      'publisher-place': 'Geneva',
      'collection-title': 'WMO Reports',
      page: '1-80',
      author: [{ literal: 'World Meteorological Organization' }],
      issued: { 'date-parts': [[1975]], circa: true },
    },
  ],
  [
    'webpage: website title, access date as a plain date, no date, particles "de la"',
    item(
      'WEBP2345',
      'webpage',
      {
        title: 'Sea level data',
        websiteTitle: 'NOAA',
        websiteType: 'Data portal',
        url: 'https://www.noaa.gov/sea-level',
        accessDate: '2024-02-29',
        date: '',
      },
      [person('author', 'de la Fontaine', 'Jean')],
    ),
    {
      id: uri('WEBP2345'),
      type: 'webpage',
      title: 'Sea level data',
      'container-title': 'NOAA',
      genre: 'Data portal',
      URL: 'https://www.noaa.gov/sea-level',
      author: [{ family: 'Fontaine', given: 'Jean', 'non-dropping-particle': 'de la' }],
      accessed: { 'date-parts': [[2024, 2, 29]] },
    },
  ],
  [
    'preprint → article: repository, archive ID, a line of Extra that is no CSL variable stays in the note',
    item(
      'PREP2345',
      'preprint',
      {
        title: 'A preprint',
        genre: 'Preprint',
        repository: 'arXiv',
        archiveID: 'arXiv:2101.00001',
        date: '2021-01-01',
        DOI: '10.48550/arXiv.2101.00001',
        extra: 'arXiv: 2101.00001',
      },
      [person('author', 'Poe', 'Pat')],
    ),
    {
      id: uri('PREP2345'),
      type: 'article',
      title: 'A preprint',
      genre: 'Preprint',
      publisher: 'arXiv',
      number: 'arXiv:2101.00001',
      DOI: '10.48550/arXiv.2101.00001',
      note: 'arXiv: 2101.00001',
      author: [{ family: 'Poe', given: 'Pat' }],
      issued: { 'date-parts': [[2021, 1, 1]] },
    },
  ],
  [
    'dataset: identifier, version, repository and its location, a written year range',
    item(
      'DATA2345',
      'dataset',
      {
        title: 'Tide gauge records',
        identifier: 'PSMSL-1',
        type: 'Time series',
        versionNumber: '2.1',
        repository: 'PSMSL',
        repositoryLocation: 'Liverpool',
        format: 'CSV',
        date: '2019-2020',
      },
      [person('author', 'Gauge', 'Tim'), person('contributor', 'Help', 'Ann')],
    ),
    {
      id: uri('DATA2345'),
      type: 'dataset',
      title: 'Tide gauge records',
      number: 'PSMSL-1',
      genre: 'Time series',
      version: '2.1',
      publisher: 'PSMSL',
      'publisher-place': 'Liverpool',
      medium: 'CSV',
      author: [{ family: 'Gauge', given: 'Tim' }],
      contributor: [{ family: 'Help', given: 'Ann' }],
      issued: { 'date-parts': [[2019], [2020]] },
    },
  ],
  [
    'computerProgram → software: programmer (primary, unmapped) becomes author',
    item(
      'SOFT2345',
      'computerProgram',
      {
        title: 'tidekit',
        seriesTitle: 'Ocean tools',
        versionNumber: '3.0.1',
        system: 'Linux',
        company: 'Tide Labs',
        place: 'Boston',
        programmingLanguage: 'Python',
        date: '2023',
      },
      [person('programmer', 'Coder', 'Cory'), person('contributor', 'Patch', 'Pam')],
    ),
    {
      id: uri('SOFT2345'),
      type: 'software',
      title: 'tidekit',
      'collection-title': 'Ocean tools',
      version: '3.0.1',
      medium: 'Linux',
      publisher: 'Tide Labs',
      'publisher-place': 'Boston',
      genre: 'Python',
      author: [{ family: 'Coder', given: 'Cory' }],
      contributor: [{ family: 'Patch', given: 'Pam' }],
      issued: { 'date-parts': [[2023]] },
    },
  ],
  [
    'patent: number, authority, filing date → submitted, priority date → original-date; attorney dropped',
    item(
      'PATE2345',
      'patent',
      {
        title: 'Floating barrier',
        place: 'US',
        issuingAuthority: 'USPTO',
        patentNumber: 'US1234567B2',
        filingDate: '2018-04-01',
        applicationNumber: '15/123,456',
        priorityNumbers: 'US62/000,001',
        issueDate: '2020-07-07',
        priorityDate: '2017-04-01',
        references: 'US999',
        legalStatus: 'Active',
        pages: '12',
      },
      [person('inventor', 'Inventa', 'Ivy'), person('attorneyAgent', 'Lawyer', 'Lou')],
    ),
    {
      id: uri('PATE2345'),
      type: 'patent',
      title: 'Floating barrier',
      'publisher-place': 'US',
      authority: 'USPTO',
      number: 'US1234567B2',
      'call-number': '15/123,456',
      issue: 'US62/000,001',
      references: 'US999',
      status: 'Active',
      page: '12',
      author: [{ family: 'Inventa', given: 'Ivy' }],
      issued: { 'date-parts': [[2020, 7, 7]] },
      submitted: { 'date-parts': [[2018, 4, 1]] },
      'original-date': { 'date-parts': [[2017, 4, 1]] },
    },
  ],
  [
    'film → motion_picture: director stays director, cast → performer, scriptwriter → script-writer',
    item(
      'FILM2345',
      'film',
      {
        title: 'Rising Tide',
        distributor: 'Ocean Films',
        place: 'Los Angeles',
        date: '1999',
        genre: 'Documentary',
        videoRecordingFormat: 'DVD',
        runningTime: '92 min',
      },
      [
        person('director', 'Director', 'Dana'),
        person('castMember', 'Actor', 'Al'),
        person('scriptwriter', 'Writer', 'Wes'),
        person('producer', 'Producer', 'Pia'),
      ],
    ),
    {
      id: uri('FILM2345'),
      type: 'motion_picture',
      title: 'Rising Tide',
      publisher: 'Ocean Films',
      'publisher-place': 'Los Angeles',
      genre: 'Documentary',
      medium: 'DVD',
      dimensions: '92 min',
      director: [{ family: 'Director', given: 'Dana' }],
      performer: [{ family: 'Actor', given: 'Al' }],
      'script-writer': [{ family: 'Writer', given: 'Wes' }],
      producer: [{ family: 'Producer', given: 'Pia' }],
      issued: { 'date-parts': [[1999]] },
    },
  ],
  [
    'interview: interviewee (primary) → author, interviewer, medium, "circa"',
    item(
      'INTV2345',
      'interview',
      { title: 'On the sea', interviewMedium: 'Radio', date: 'circa 1965', place: 'Lisbon' },
      [person('interviewee', 'Talker', 'Tess'), person('interviewer', 'Asker', 'Abe')],
    ),
    {
      id: uri('INTV2345'),
      type: 'interview',
      title: 'On the sea',
      medium: 'Radio',
      'publisher-place': 'Lisbon',
      author: [{ family: 'Talker', given: 'Tess' }],
      interviewer: [{ family: 'Asker', given: 'Abe' }],
      issued: { 'date-parts': [[1965]], circa: true },
    },
  ],
  [
    'presentation → speech: meeting → event-title, Place also the event place, chair and organizer',
    item(
      'PRES2345',
      'presentation',
      {
        title: 'Keynote',
        presentationType: 'Keynote address',
        meetingName: 'Ocean Summit',
        place: 'Lisbon',
        sessionTitle: 'Plenary',
        series: 'Summit talks',
        date: 'June 3, 2022',
      },
      [
        person('presenter', 'Speaker', 'Sue'),
        person('chair', 'Chair', 'Cha'),
        person('organizer', 'Org', 'Otto'),
      ],
    ),
    {
      id: uri('PRES2345'),
      type: 'speech',
      title: 'Keynote',
      genre: 'Keynote address',
      'event-title': 'Ocean Summit',
      'publisher-place': 'Lisbon',
      'event-place': 'Lisbon',
      'container-title': 'Plenary',
      'collection-title': 'Summit talks',
      author: [{ family: 'Speaker', given: 'Sue' }],
      chair: [{ family: 'Chair', given: 'Cha' }],
      organizer: [{ family: 'Org', given: 'Otto' }],
      issued: { 'date-parts': [[2022, 6, 3]] },
    },
  ],
  [
    'newspaperArticle: edition, section, written date',
    item(
      'NEWS2345',
      'newspaperArticle',
      {
        title: 'Floods hit coast',
        publicationTitle: 'The Times',
        place: 'London',
        edition: 'Late',
        section: 'World',
        pages: 'A1',
        date: 'March 5, 2020',
      },
      [person('author', 'Reporter', 'Rita')],
    ),
    {
      id: uri('NEWS2345'),
      type: 'article-newspaper',
      title: 'Floods hit coast',
      'container-title': 'The Times',
      'publisher-place': 'London',
      edition: 'Late',
      section: 'World',
      page: 'A1',
      author: [{ family: 'Reporter', given: 'Rita' }],
      issued: { 'date-parts': [[2020, 3, 5]] },
    },
  ],
  [
    'magazineArticle: season, volume, issue',
    item(
      'MAGA2345',
      'magazineArticle',
      { title: 'Waves', publicationTitle: 'Ocean Monthly', volume: '8', issue: '2', date: 'Spring 2021' },
      [person('author', 'Writer', 'Wanda')],
    ),
    {
      id: uri('MAGA2345'),
      type: 'article-magazine',
      title: 'Waves',
      'container-title': 'Ocean Monthly',
      volume: '8',
      issue: '2',
      author: [{ family: 'Writer', given: 'Wanda' }],
      issued: { 'date-parts': [[2021]], season: 'Spring' },
    },
  ],
  [
    'encyclopediaArticle: encyclopedia title, edition, volume, editor',
    item(
      'ENCY2345',
      'encyclopediaArticle',
      {
        title: 'Tsunami',
        encyclopediaTitle: 'Encyclopedia of the Sea',
        edition: '3',
        volume: '9',
        date: '2005',
      },
      [person('author', 'Expert', 'Eve'), person('editor', 'Chief', 'Carl')],
    ),
    {
      id: uri('ENCY2345'),
      type: 'entry-encyclopedia',
      title: 'Tsunami',
      'container-title': 'Encyclopedia of the Sea',
      edition: '3',
      volume: '9',
      author: [{ family: 'Expert', given: 'Eve' }],
      editor: [{ family: 'Chief', given: 'Carl' }],
      issued: { 'date-parts': [[2005]] },
    },
  ],
  [
    'statute → legislation: name of act → title, code → container-title, session → chapter-number',
    item('STAT2345', 'statute', {
      nameOfAct: 'Coastal Protection Act',
      code: 'U.S.C.',
      codeNumber: '33',
      publicLawNumber: 'Pub. L. 101-1',
      dateEnacted: '1990-10-01',
      pages: '101',
      section: '5',
      session: '101st',
      history: 'Amended 1995',
    }),
    {
      id: uri('STAT2345'),
      type: 'legislation',
      title: 'Coastal Protection Act',
      'container-title': 'U.S.C.',
      volume: '33',
      number: 'Pub. L. 101-1',
      page: '101',
      section: '5',
      'chapter-number': '101st',
      references: 'Amended 1995',
      issued: { 'date-parts': [[1990, 10, 1]] },
    },
  ],
  [
    'case → legal_case: court → authority, reporter, first page, docket number; counsel dropped',
    item(
      'CASE2345',
      'case',
      {
        caseName: 'Sea v. Shore',
        court: 'Supreme Court',
        dateDecided: '2001-02-03',
        docketNumber: '00-123',
        reporter: 'U.S.',
        reporterVolume: '531',
        firstPage: '98',
        history: 'Affirmed',
      },
      [person('author', 'Judge', 'Jo'), person('counsel', 'Counsel', 'Cy')],
    ),
    {
      id: uri('CASE2345'),
      type: 'legal_case',
      title: 'Sea v. Shore',
      authority: 'Supreme Court',
      number: '00-123',
      'container-title': 'U.S.',
      volume: '531',
      page: '98',
      references: 'Affirmed',
      author: [{ family: 'Judge', given: 'Jo' }],
      issued: { 'date-parts': [[2001, 2, 3]] },
    },
  ],
  [
    'audioRecording → song: label, Place also the event place, performer (primary) → author, wordsBy dropped',
    item(
      'AUDI2345',
      'audioRecording',
      {
        title: 'Sea Songs',
        label: 'Deep Records',
        place: 'Liverpool',
        audioRecordingFormat: 'LP',
        runningTime: '45:00',
        date: '1968',
      },
      [
        person('performer', 'Singer', 'Sal'),
        person('composer', 'Composer', 'Cleo'),
        person('wordsBy', 'Lyricist', 'Lee'),
      ],
    ),
    {
      id: uri('AUDI2345'),
      type: 'song',
      title: 'Sea Songs',
      publisher: 'Deep Records',
      'publisher-place': 'Liverpool',
      'event-place': 'Liverpool',
      medium: 'LP',
      dimensions: '45:00',
      author: [{ family: 'Singer', given: 'Sal' }],
      composer: [{ family: 'Composer', given: 'Cleo' }],
      issued: { 'date-parts': [[1968]] },
    },
  ],
  [
    'standard: organization → authority, committee → section, number and version; quoted title',
    item('STAN2345', 'standard', {
      title: '"Quoted Title"',
      organization: 'ISO',
      committee: 'TC 8',
      type: 'International Standard',
      number: '19901-1',
      versionNumber: '2',
      status: 'Published',
      date: '2015',
      publisher: 'ISO',
      place: 'Geneva',
    }),
    {
      id: uri('STAN2345'),
      type: 'standard',
      title: 'Quoted Title',
      authority: 'ISO',
      section: 'TC 8',
      genre: 'International Standard',
      number: '19901-1',
      version: '2',
      status: 'Published',
      publisher: 'ISO',
      'publisher-place': 'Geneva',
      issued: { 'date-parts': [[2015]] },
    },
  ],
];

describe('toCslJson: one item of each type, field by field', () => {
  it('covers at least fifteen item types', () => {
    expect(new Set(CASES.map(([, i]) => i.data.itemType)).size).toBeGreaterThanOrEqual(15);
  });

  it.each(CASES)('%s', (_name, input, expected) => {
    expect(toCslJson(input, schema)).toEqual(expected);
  });

  it('gives the same JSON for the same item, byte for byte, on every call', () => {
    const [, input] = CASES[0] as (typeof CASES)[number];
    expect(JSON.stringify(toCslJson(input, schema))).toBe(
      JSON.stringify(toCslJson(structuredClone(input), schema)),
    );
  });

  it('puts id and type first', () => {
    const [, input] = CASES[1] as (typeof CASES)[number];
    expect(Object.keys(toCslJson(input, schema)).slice(0, 2)).toEqual(['id', 'type']);
  });
});

describe('the id', () => {
  it('is the item URI, users/<id> or groups/<id>, unless one is given', () => {
    const mine = item('ABCD2345', 'book', { title: 'T' });
    const theirs = item('EFGH2345', 'book', { title: 'T' }, [], { type: 'group', id: 4711, name: 'Lab' });
    expect(itemUri(mine)).toBe('http://zotero.org/users/8675309/items/ABCD2345');
    expect(toCslJson(theirs, schema).id).toBe('http://zotero.org/groups/4711/items/EFGH2345');
    expect(toCslJson(mine, schema, { id: 'smith2020' }).id).toBe('smith2020');
  });
});

describe('types Zotero maps specially', () => {
  it('a note is a document titled by its first line; an attachment a document', () => {
    const note = item('NOTE2345', 'note', { note: '<h1>Reading notes</h1><p>Second line</p>' });
    expect(toCslJson(note, schema)).toEqual({
      id: uri('NOTE2345'),
      type: 'document',
      title: 'Reading notes',
    });
    const pdf = item('ATTA2345', 'attachment', { title: 'Full text PDF', url: 'https://x.org/a.pdf' });
    expect(toCslJson(pdf, schema)).toEqual({
      id: uri('ATTA2345'),
      type: 'document',
      title: 'Full text PDF',
      URL: 'https://x.org/a.pdf',
    });
  });

  it('an annotation has no CSL form', () => {
    expect(() => toCslJson(item('ANNO2345', 'annotation', {}), schema)).toThrow(/annotation has no CSL form/);
  });

  it('an item type the schema does not know is a document with the fields it has', () => {
    expect(toCslJson(item('NEWT2345', 'hologram', { title: 'Future', date: '2031' }), schema)).toEqual({
      id: uri('NEWT2345'),
      type: 'document',
      title: 'Future',
      issued: { 'date-parts': [[2031]] },
    });
  });
});

describe('names', () => {
  const one = (c: WebApiCreator) => cslName(c);

  it('a single-field name is a literal, also in the legacy fieldMode 1 shape', () => {
    expect(one(org('author', 'Royal Society'))).toEqual({ literal: 'Royal Society' });
    expect(
      cslName({ creatorType: 'author', lastName: 'Royal Society', firstName: '', fieldMode: 1 }),
    ).toEqual({
      literal: 'Royal Society',
    });
  });

  it('a two-field name with only one part keeps the other empty, unparsed', () => {
    expect(one(person('author', 'van Gogh', ''))).toEqual({ family: 'van Gogh', given: '' });
    expect(one(person('author', '', 'Cher'))).toEqual({ family: '', given: 'Cher' });
    expect(one(person('author', '', ''))).toBeUndefined();
  });

  it.each<[string, string, Record<string, unknown>]>([
    ['van Gogh', 'Vincent', { family: 'Gogh', given: 'Vincent', 'non-dropping-particle': 'van' }],
    ['Van Gogh', 'Vincent', { family: 'Van Gogh', given: 'Vincent' }],
    ['de la Fontaine', 'Jean', { family: 'Fontaine', given: 'Jean', 'non-dropping-particle': 'de la' }],
    ["d'Alembert", 'Jean', { family: 'Alembert', given: 'Jean', 'non-dropping-particle': "d'" }],
    ['al-Khwarizmi', 'Muhammad', { family: 'Khwarizmi', given: 'Muhammad', 'non-dropping-particle': 'al-' }],
    ['Humboldt', 'Alexander von', { family: 'Humboldt', given: 'Alexander', 'dropping-particle': 'von' }],
    ['Poussin', 'Charles de la Vallée', { family: 'Poussin', given: 'Charles de la Vallée' }],
    ['Gogh', 'Vincent van der', { family: 'Gogh', given: 'Vincent', 'dropping-particle': 'van der' }],
    ['King', 'Martin Luther, Jr.', { family: 'King', given: 'Martin Luther', suffix: 'Jr.' }],
    ['Smith', 'John,! Jr.', { family: 'Smith', given: 'John', suffix: 'Jr.', 'comma-suffix': true }],
    ['"van Gogh"', 'Vincent', { family: 'van Gogh', given: 'Vincent' }],
    ['фон Бисмарк', 'Отто', { family: 'Бисмарк', given: 'Отто', 'non-dropping-particle': 'фон' }],
    ['毛', '泽东', { family: '毛', given: '泽东' }],
    ['Nakamura', 'Shūji', { family: 'Nakamura', given: 'Shūji' }],
  ])('%s, %s', (lastName, firstName, expected) => {
    expect(one(person('author', lastName, firstName))).toEqual(expected);
  });

  it('splits particles exactly as citeproc-js does (where Zotero took its rules from)', () => {
    const engine = createRequire(import.meta.url)('citeproc') as { parseParticles(n: object): void };
    const names: Array<[string, string]> = [
      ['van Gogh', 'Vincent'],
      ['de la Fontaine', 'Jean'],
      ["d'Alembert", 'Jean'],
      ["d' Artagnan", 'Charles'],
      ['d\u2019Urso', 'Maria'],
      ['al-Khwarizmi', 'Muhammad'],
      ['de Gaulle-Smith', 'X'],
      ['van der Berg', 'Pieter'],
      ['Humboldt', 'Alexander von'],
      ['Gaulle', 'Charles de'],
      ['Gogh', 'Vincent van der'],
      ['King', 'Martin Luther, Jr.'],
      ['Smith', 'John,! Jr.'],
      ['Doe', 'John, et al.'],
      ['фон Бисмарк', 'Отто'],
      ['Толстой', 'Лев Николаевич'],
      ['毛', '泽东'],
      ['村上', '春樹'],
      ['ʻIolani', 'Kamaka'],
      ['van', 'Jan'],
      ['Mac Donald', 'Ian'],
      ['dos Santos', 'Ana Maria'],
      ['ten Brink', 'Jan'],
    ];
    for (const [family, given] of names) {
      const theirs = { family, given };
      engine.parseParticles(theirs);
      expect(parseParticles({ family, given }), `${family}, ${given}`).toEqual(theirs);
    }
  });

  it('parseParticles splits a name given as family and given', () => {
    expect(parseParticles({ family: 'von Neumann', given: 'John' })).toEqual({
      family: 'Neumann',
      given: 'John',
      'non-dropping-particle': 'von',
    });
  });

  it('keeps the creators of one role in their order, across other roles', () => {
    const csl = toCslJson(
      item('ORDR2345', 'book', { title: 'T' }, [
        person('editor', 'E1', 'A'),
        person('author', 'A1', 'B'),
        person('editor', 'E2', 'C'),
        person('author', 'A2', 'D'),
      ]),
      schema,
    );
    expect(csl.author).toEqual([
      { family: 'A1', given: 'B' },
      { family: 'A2', given: 'D' },
    ]);
    expect(csl.editor).toEqual([
      { family: 'E1', given: 'A' },
      { family: 'E2', given: 'C' },
    ]);
  });
});

describe('text values', () => {
  it('takes the first non-empty field of a variable and strips outer quotes only', () => {
    const csl = toCslJson(
      item('TEXT2345', 'journalArticle', {
        title: '"Wholly quoted"',
        publicationTitle: '"Half" quoted',
        seriesTitle: '',
        series: 'Series as fallback',
      }),
      schema,
    );
    expect(csl.title).toBe('Wholly quoted');
    expect(csl['container-title']).toBe('"Half" quoted');
    expect(csl['collection-title']).toBe('Series as fallback');
  });

  it('an ISBN field without an ISBN at its start is kept as written', () => {
    expect(toCslJson(item('ISBN2345', 'book', { ISBN: 'pending' }), schema).ISBN).toBe('pending');
    expect(
      toCslJson(item('ISBX2345', 'book', { ISBN: '0-8044-2957-X; 978-0-8044-2957-3' }), schema).ISBN,
    ).toBe('0-8044-2957-X');
  });
});

/** The citeproc-js engine of the `citeproc` package (CommonJS, untyped). */
interface CiteprocEngine {
  updateItems(ids: string[]): void;
  makeBibliography(): false | [{ entry_ids: string[][] }, string[]];
  setOutputFormat(format: string): void;
}
type CiteprocModule = {
  Engine: new (sys: object, style: string, lang?: string, forceLang?: boolean) => CiteprocEngine;
};

describe('citeproc-js takes the output', () => {
  const CSL = createRequire(import.meta.url)('citeproc') as CiteprocModule;
  const STYLES = '/usr/share/citation-style-language';
  const style = readFileSync(`${STYLES}/styles/apa.csl`, 'utf8');

  it('APA (en-US) makes one bibliography entry per item, without errors', () => {
    const items = CASES.map(([, i]) => toCslJson(i, schema));
    const byId = new Map(items.map((i) => [i.id, i]));
    const sys = {
      retrieveLocale: (lang: string) => {
        try {
          return readFileSync(`${STYLES}/locales/locales-${lang}.xml`, 'utf8');
        } catch {
          return false;
        }
      },
      retrieveItem: (id: string) => byId.get(id),
    };
    const engine = new CSL.Engine(sys, style, 'en-US');
    engine.setOutputFormat('text');
    engine.updateItems(items.map((i) => i.id));
    const bib = engine.makeBibliography();
    expect(bib).not.toBe(false);
    const [meta, entries] = bib as [{ entry_ids: string[][] }, string[]];
    expect(entries).toHaveLength(items.length);
    expect(new Set(meta.entry_ids.flat())).toEqual(new Set(items.map((i) => i.id)));
    for (const entry of entries) expect(entry).not.toMatch(/CSL STYLE ERROR|undefined|\[object Object\]/);
    const text = entries.join('');
    for (const i of items) expect(text).toContain(i.title as string);
    // Names the engine read as names: particles, literals, non-Latin scripts.
    expect(text).toContain('van der Berg, P.');
    expect(text).toContain('World Meteorological Organization');
    expect(text).toContain('村上');
  });
});
