/**
 * A small, realistic sample library: journal articles, books, book sections, conference
 * papers, theses, webpages and a report, with creators (accented names, organisations),
 * abstracts, tags (manual and automatic), nested collections, child notes, attachments with
 * full text and annotations, relations, a saved search, a trashed item and a trashed
 * collection, and a group library with its own items. Deterministic: the same file every time.
 */
import type { BuildSpec, CreatorSpec, ItemSpec } from '../fixture/builder.js';

/** Keys the tests and demos refer to. */
export const SAMPLE_KEYS = {
  user: {
    userID: 8675309,
    collections: {
      climate: 'CLIMATE2',
      seaLevel: 'SEALEVE2',
      iceSheets: 'ICESHEE2',
      attribution: 'ATTRIBU2',
      ml: 'MACHINE2',
      transformers: 'TRANSFM2',
      thesis: 'THESISW2',
      /** In the trash. */
      oldProjects: 'PASTPRJ2',
    },
    items: {
      seaLevelArticle: 'CHURCH22',
      greenlandArticle: 'GREENLD2',
      attentionPaper: 'VASWANI7',
      /** In the trash, with a child note. */
      trashedArticle: 'TRASHED2',
      deepLearningBook: 'DEEPLRN2',
      muellerThesis: 'MUELLER2',
      standaloneNote: 'PLANNTE2',
      linkedFile: 'LINKEDF2',
    },
  },
  group: {
    groupID: 4711,
    collections: { fieldwork: 'FIELDWK2', shared: 'SHAREDC2' },
    items: { coralReport: 'CRALREP2', groupArticle: 'GRPARTC2' },
  },
} as const;

const p = (firstName: string, lastName: string, creatorType?: string): CreatorSpec =>
  creatorType ? { firstName, lastName, creatorType } : { firstName, lastName };
const org = (name: string, creatorType?: string): CreatorSpec =>
  creatorType ? { name, creatorType } : { name };

const U = SAMPLE_KEYS.user;
const C = U.collections;
const I = U.items;

function userItems(): ItemSpec[] {
  return [
    {
      key: I.seaLevelArticle,
      itemType: 'journalArticle',
      fields: {
        title: 'Sea-level rise from the late 19th to the early 21st century',
        abstractNote:
          'We estimate global mean sea-level rise from tide gauges and satellite altimetry, and find an acceleration since the 1990s driven by ice-sheet mass loss and thermal expansion.',
        publicationTitle: 'Surveys in Geophysics',
        journalAbbreviation: 'Surv Geophys',
        volume: '32',
        issue: '4-5',
        pages: '585-602',
        date: '2011-09-01',
        DOI: '10.1007/s10712-011-9119-1',
        ISSN: '0169-3298',
        language: 'en',
        url: 'https://doi.org/10.1007/s10712-011-9119-1',
        accessDate: '2023-05-04T10:11:12Z',
        extra: 'Citation Key: church2011',
      },
      creators: [p('John A.', 'Church'), p('Neil J.', 'White')],
      tags: ['sea level', 'tide gauges', { tag: 'Oceanography', type: 1 }],
      collections: [C.seaLevel],
      dateAdded: '2023-05-04T10:11:12Z',
      dateModified: '2024-02-01T08:00:00Z',
      version: 1201,
      relations: { 'dc:relation': `http://zotero.org/users/8675309/items/${I.greenlandArticle}` },
      notes: [
        {
          note: '<h1>Reading notes</h1><p>Acceleration of about 0.009 mm/yr² since 1880; compare with <i>altimetry</i> after 1993.</p>',
          tags: ['to-cite'],
          dateAdded: '2023-05-05T09:00:00Z',
        },
      ],
      attachments: [
        {
          title: 'Full Text PDF',
          filename: 'Church and White - 2011 - Sea-level rise.pdf',
          contentType: 'application/pdf',
          md5: '9e107d9d372bb6826bd81d3542a419d6',
          mtime: 1683195072000,
          dateAdded: '2023-05-04T10:11:20Z',
          fulltext: {
            content:
              'Sea-level rise from the late 19th to the early 21st century. Tide gauge records and satellite altimetry show a rate of 3.2 mm per year since 1993. Thermosteric expansion and glacier melt explain most of the observed rise; the Antarctic contribution remains uncertain.',
            indexedPages: 18,
            totalPages: 18,
          },
          annotations: [
            {
              type: 'highlight',
              text: 'a rate of 3.2 mm per year since 1993',
              comment: 'Key number for chapter 2',
              color: '#ffd400',
              pageLabel: '587',
              sortIndex: '00002|000410|00120',
            },
            {
              type: 'note',
              comment: 'Check the Antarctic term against IMBIE.',
              color: '#5fb236',
              pageLabel: '590',
              sortIndex: '00005|000000|00300',
            },
          ],
        },
        {
          title: 'Snapshot',
          linkMode: 'imported_url',
          filename: 'snapshot.html',
          contentType: 'text/html',
          charset: 'utf-8',
          url: 'https://link.springer.com/article/10.1007/s10712-011-9119-1',
          accessDate: '2023-05-04T10:11:15Z',
          dateAdded: '2023-05-04T10:11:21Z',
        },
      ],
    },
    {
      key: I.greenlandArticle,
      itemType: 'journalArticle',
      fields: {
        title: 'Mass balance of the Greenland Ice Sheet from 1992 to 2018',
        abstractNote:
          'The Greenland Ice Sheet lost 3,902 billion tonnes of ice between 1992 and 2018, raising global sea level by 10.8 millimetres.',
        publicationTitle: 'Nature',
        volume: '579',
        pages: '233-239',
        date: 'March 2020',
        DOI: '10.1038/s41586-019-1855-2',
        language: 'en',
      },
      creators: [org('The IMBIE Team'), p('Andrew', 'Shepherd'), p('Erik', 'Ivins'), p('Eric', 'Rignot')],
      tags: ['ice sheets', 'Greenland', 'sea level'],
      collections: [C.iceSheets, C.seaLevel],
      dateAdded: '2023-06-10T12:00:00Z',
      dateModified: '2023-06-10T12:30:00Z',
      version: 1190,
      relations: { 'dc:relation': `http://zotero.org/users/8675309/items/${I.seaLevelArticle}` },
      attachments: [
        {
          title: 'Accepted Version',
          filename: 'imbie2020.pdf',
          contentType: 'application/pdf',
          fulltext: {
            content:
              'Greenland mass balance from satellite gravimetry, altimetry and the input-output method. Surface melt and ice discharge both increased after 2000.',
            indexedPages: 7,
            totalPages: 7,
          },
        },
      ],
    },
    {
      itemType: 'journalArticle',
      fields: {
        title: 'Antarctic ice-sheet contribution to future sea-level rise',
        abstractNote:
          'Marine ice-cliff instability could double the Antarctic contribution to sea-level rise by 2100.',
        publicationTitle: 'Nature',
        volume: '531',
        pages: '591-597',
        date: '2016-03-31',
        DOI: '10.1038/nature17145',
      },
      creators: [p('Robert M.', 'DeConto'), p('David', 'Pollard')],
      tags: ['ice sheets', 'Antarctica', 'sea level'],
      collections: [C.iceSheets],
      dateAdded: '2023-06-11T08:00:00Z',
      version: 1105,
    },
    {
      itemType: 'journalArticle',
      fields: {
        title: 'Attribution of extreme weather events in the context of climate change',
        abstractNote: 'A review of methods that estimate how much human influence changed an extreme event.',
        publicationTitle: 'Bulletin of the American Meteorological Society',
        date: '2016',
        DOI: '10.1175/BAMS-D-15-00035.1',
      },
      creators: [p('Peter A.', 'Stott'), p('Nikolaos', 'Christidis'), p('Friederike E. L.', 'Otto')],
      tags: ['attribution', 'extreme events'],
      collections: [C.attribution, C.climate],
      dateAdded: '2023-07-01T10:00:00Z',
      version: 1010,
    },
    {
      itemType: 'report',
      fields: {
        title: 'Climate Change 2021: The Physical Science Basis. Summary for Policymakers',
        abstractNote:
          'It is unequivocal that human influence has warmed the atmosphere, ocean and land. Global mean sea level increased by 0.20 m between 1901 and 2018.',
        institution: 'Cambridge University Press',
        place: 'Cambridge, UK',
        date: '2021-08-09',
        reportType: 'Assessment report',
        url: 'https://www.ipcc.ch/report/ar6/wg1/',
      },
      creators: [org('Intergovernmental Panel on Climate Change'), p('Valérie', 'Masson-Delmotte', 'editor')],
      tags: ['IPCC', 'sea level', 'attribution'],
      collections: [C.climate],
      dateAdded: '2023-07-02T10:00:00Z',
      version: 1011,
    },
    {
      itemType: 'journalArticle',
      fields: {
        title: 'Über die Erwärmung der Ozeane im 20. Jahrhundert',
        abstractNote:
          'Eine Analyse der Wärmeaufnahme des Ozeans und ihrer Rolle für den Meeresspiegelanstieg.',
        publicationTitle: 'Zeitschrift für Meereskunde',
        date: '1998',
        language: 'de',
      },
      creators: [p('Jürgen', 'Müller'), p('Søren', 'Østergaard')],
      tags: ['Ozean', 'sea level'],
      collections: [C.seaLevel],
      dateAdded: '2023-07-03T10:00:00Z',
      version: 1012,
    },
    {
      key: I.attentionPaper,
      itemType: 'conferencePaper',
      fields: {
        title: 'Attention Is All You Need',
        abstractNote:
          'We propose a new simple network architecture, the Transformer, based solely on attention mechanisms, dispensing with recurrence and convolutions entirely.',
        proceedingsTitle: 'Advances in Neural Information Processing Systems 30',
        conferenceName: 'NeurIPS 2017',
        place: 'Long Beach, CA',
        date: '2017',
        pages: '5998-6008',
        url: 'https://arxiv.org/abs/1706.03762',
      },
      creators: [
        p('Ashish', 'Vaswani'),
        p('Noam', 'Shazeer'),
        p('Niki', 'Parmar'),
        p('Jakob', 'Uszkoreit'),
        p('Llion', 'Jones'),
        p('Aidan N.', 'Gomez'),
        p('Łukasz', 'Kaiser'),
        p('Illia', 'Polosukhin'),
      ],
      tags: ['transformers', 'attention', { tag: 'Computer Science - Computation and Language', type: 1 }],
      collections: [C.transformers, C.ml],
      dateAdded: '2023-08-01T09:00:00Z',
      dateModified: '2024-03-01T09:00:00Z',
      version: 1250,
      notes: ['<p>Multi-head attention: <code>h = 8</code> heads, <code>d_k = 64</code>.</p>'],
      attachments: [
        {
          title: 'arXiv Fulltext PDF',
          filename: 'Vaswani et al. - 2017 - Attention is all you need.pdf',
          contentType: 'application/pdf',
          fulltext: {
            content:
              'The dominant sequence transduction models are based on complex recurrent or convolutional neural networks. We propose the Transformer. Scaled dot-product attention and positional encoding replace recurrence.',
            indexedPages: 11,
            totalPages: 15,
          },
          annotations: [
            {
              type: 'highlight',
              text: 'Scaled dot-product attention',
              color: '#2ea8e5',
              pageLabel: '4',
              sortIndex: '00003|001200|00200',
            },
          ],
        },
      ],
    },
    {
      itemType: 'conferencePaper',
      fields: {
        title: 'BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding',
        proceedingsTitle: 'Proceedings of NAACL-HLT 2019',
        conferenceName: 'NAACL-HLT',
        date: 'June 2019',
        pages: '4171-4186',
        DOI: '10.18653/v1/N19-1423',
      },
      creators: [
        p('Jacob', 'Devlin'),
        p('Ming-Wei', 'Chang'),
        p('Kenton', 'Lee'),
        p('Kristina', 'Toutanova'),
      ],
      tags: ['transformers', 'language models'],
      collections: [C.transformers],
      dateAdded: '2023-08-02T09:00:00Z',
      version: 1251,
    },
    {
      itemType: 'conferencePaper',
      fields: {
        title: 'Deep Residual Learning for Image Recognition',
        proceedingsTitle: 'IEEE Conference on Computer Vision and Pattern Recognition (CVPR)',
        date: '2016',
        pages: '770-778',
        DOI: '10.1109/CVPR.2016.90',
      },
      creators: [p('Kaiming', 'He'), p('Xiangyu', 'Zhang'), p('Shaoqing', 'Ren'), p('Jian', 'Sun')],
      tags: ['computer vision'],
      collections: [C.ml],
      dateAdded: '2023-08-03T09:00:00Z',
      version: 1252,
    },
    {
      itemType: 'conferencePaper',
      fields: {
        title: 'Neural Machine Translation by Jointly Learning to Align and Translate',
        conferenceName: 'ICLR 2015',
        date: '2015-05-07',
        url: 'https://arxiv.org/abs/1409.0473',
      },
      creators: [p('Dzmitry', 'Bahdanau'), p('Kyunghyun', 'Cho'), p('Yoshua', 'Bengio')],
      tags: ['attention', 'machine translation'],
      collections: [C.transformers],
      dateAdded: '2023-08-04T09:00:00Z',
      version: 1253,
    },
    {
      key: I.deepLearningBook,
      itemType: 'book',
      fields: {
        title: 'Deep Learning',
        abstractNote: 'An introduction to a broad range of topics in deep learning.',
        series: 'Adaptive Computation and Machine Learning',
        publisher: 'MIT Press',
        place: 'Cambridge, MA',
        date: '2016-11-18',
        numPages: '775',
        ISBN: '978-0-262-03561-3',
        url: 'https://www.deeplearningbook.org',
      },
      creators: [p('Ian', 'Goodfellow'), p('Yoshua', 'Bengio'), p('Aaron', 'Courville')],
      tags: ['textbook', 'deep learning'],
      collections: [C.ml],
      dateAdded: '2023-08-05T09:00:00Z',
      version: 1260,
      notes: ['<p>Chapter 10 (sequence modeling) is the useful one for the RNN comparison.</p>'],
    },
    {
      itemType: 'book',
      fields: {
        title: 'The Structure of Scientific Revolutions',
        publisher: 'University of Chicago Press',
        place: 'Chicago',
        date: '1962',
        edition: '1',
        ISBN: '978-0-226-45808-3',
      },
      creators: [p('Thomas S.', 'Kuhn')],
      tags: ['philosophy of science'],
      collections: [C.thesis],
      dateAdded: '2023-09-01T09:00:00Z',
      version: 1300,
    },
    {
      itemType: 'book',
      fields: {
        title: 'Gödel, Escher, Bach: An Eternal Golden Braid',
        publisher: 'Basic Books',
        place: 'New York',
        date: '1979',
        ISBN: '978-0-465-02656-2',
      },
      creators: [p('Douglas R.', 'Hofstadter')],
      tags: ['philosophy of mind'],
      dateAdded: '2023-09-02T09:00:00Z',
      version: 1301,
    },
    {
      itemType: 'book',
      fields: {
        title: 'Ocean Circulation',
        publisher: 'Butterworth-Heinemann',
        date: '2001',
        edition: '2',
      },
      creators: [p('Evelyn', 'Brown', 'editor'), org('Open University Course Team')],
      tags: ['Ozean', 'oceanography'],
      collections: [C.climate],
      dateAdded: '2023-09-03T09:00:00Z',
      version: 1302,
    },
    {
      itemType: 'bookSection',
      fields: {
        title: 'Sea Level Change',
        bookTitle:
          'Climate Change 2013: The Physical Science Basis. Contribution of Working Group I to the Fifth Assessment Report',
        publisher: 'Cambridge University Press',
        place: 'Cambridge',
        date: '2013',
        pages: '1137-1216',
      },
      creators: [p('John A.', 'Church'), p('Peter U.', 'Clark'), p('Thomas F.', 'Stocker', 'editor')],
      tags: ['IPCC', 'sea level'],
      collections: [C.seaLevel],
      dateAdded: '2023-10-01T09:00:00Z',
      version: 1310,
    },
    {
      itemType: 'bookSection',
      fields: {
        title: 'Sequence Modeling: Recurrent and Recursive Nets',
        publicationTitle: 'Deep Learning',
        publisher: 'MIT Press',
        date: '2016',
        pages: '367-415',
      },
      creators: [p('Ian', 'Goodfellow'), p('Yoshua', 'Bengio'), p('Aaron', 'Courville')],
      tags: ['deep learning'],
      collections: [C.ml],
      dateAdded: '2023-10-02T09:00:00Z',
      version: 1311,
    },
    {
      itemType: 'bookSection',
      fields: {
        title: 'Writing the literature review',
        bookTitle: 'How to Write a Thesis',
        publisher: 'Open University Press',
        date: '2020',
        edition: '4',
      },
      creators: [p('Rowena', 'Murray')],
      tags: ['writing'],
      collections: [C.thesis],
      dateAdded: '2023-10-03T09:00:00Z',
      version: 1312,
    },
    {
      itemType: 'bookSection',
      fields: {
        title: 'Paleoclimate perspectives on sea level',
        bookTitle: 'Understanding Sea-Level Rise and Variability',
        publisher: 'Wiley-Blackwell',
        date: '2010',
      },
      creators: [p('Kurt', 'Lambeck'), p('José', 'Martínez'), p('Thorsten', 'Mauritsen', 'editor')],
      tags: ['sea level', 'paleoclimate'],
      collections: [C.seaLevel],
      dateAdded: '2023-10-04T09:00:00Z',
      version: 1313,
    },
    {
      key: I.muellerThesis,
      itemType: 'thesis',
      fields: {
        title: 'Meeresspiegelanstieg an der Nordseeküste: Beobachtungen und Projektionen',
        abstractNote: 'Die Dissertation untersucht Pegelmessungen an der deutschen Nordseeküste seit 1850.',
        thesisType: 'Dissertation',
        university: 'Universität Hamburg',
        place: 'Hamburg',
        date: '2019',
        numPages: '214',
        language: 'de',
      },
      creators: [p('Anna-Lena', 'Müller')],
      tags: ['sea level', 'Nordsee'],
      collections: [C.seaLevel, C.thesis],
      dateAdded: '2023-11-01T09:00:00Z',
      version: 1320,
      attachments: [
        {
          title: 'Dissertation PDF',
          filename: 'mueller2019.pdf',
          contentType: 'application/pdf',
          fulltext: {
            content:
              'Pegelmessungen zeigen einen Anstieg des mittleren Meeresspiegels von 1,7 mm pro Jahr. Die Sturmflutwasserstände steigen schneller.',
            indexedPages: 214,
            totalPages: 214,
          },
        },
      ],
    },
    {
      itemType: 'thesis',
      fields: {
        title: 'Learning to attend: neural attention for sequence transduction',
        thesisType: 'PhD thesis',
        university: 'University of Toronto',
        date: '2018',
      },
      creators: [p('Chloë', 'Zhāng')],
      tags: ['attention'],
      collections: [C.ml],
      dateAdded: '2023-11-02T09:00:00Z',
      version: 1321,
    },
    {
      itemType: 'thesis',
      fields: {
        title: 'Tidal gauges and vertical land motion in the Baltic',
        thesisType: 'MSc thesis',
        university: 'Stockholm University',
        date: '2015',
      },
      creators: [p('Åsa', 'Lindqvist')],
      tags: ['sea level', 'Baltic'],
      dateAdded: '2023-11-03T09:00:00Z',
      version: 1322,
    },
    {
      itemType: 'webpage',
      fields: {
        title: 'Climate Change: Global Sea Level',
        websiteTitle: 'NOAA Climate.gov',
        websiteType: 'Article',
        date: '2022-04-19',
        url: 'https://www.climate.gov/news-features/understanding-climate/climate-change-global-sea-level',
        accessDate: '2024-01-15T14:00:00Z',
      },
      creators: [p('Rebecca', 'Lindsey')],
      tags: ['sea level', 'outreach'],
      collections: [C.seaLevel],
      dateAdded: '2024-01-15T14:00:00Z',
      version: 1400,
      attachments: [
        {
          title: 'climate.gov page',
          linkMode: 'linked_url',
          url: 'https://www.climate.gov/news-features/understanding-climate/climate-change-global-sea-level',
          contentType: 'text/html',
        },
      ],
    },
    {
      itemType: 'webpage',
      fields: {
        title: 'The Illustrated Transformer',
        websiteTitle: "Jay Alammar's blog",
        date: '2018-06-27',
        url: 'https://jalammar.github.io/illustrated-transformer/',
        accessDate: '2024-01-16T14:00:00Z',
      },
      creators: [p('Jay', 'Alammar')],
      tags: ['transformers', 'tutorial'],
      collections: [C.transformers],
      dateAdded: '2024-01-16T14:00:00Z',
      version: 1401,
    },
    {
      itemType: 'webpage',
      fields: {
        title: 'Zotero Documentation: Collections and Tags',
        websiteTitle: 'Zotero Documentation',
        url: 'https://www.zotero.org/support/collections_and_tags',
        accessDate: '2024-01-17T14:00:00Z',
      },
      creators: [org('Zotero')],
      tags: ['tools'],
      dateAdded: '2024-01-17T14:00:00Z',
      version: 1402,
    },
    {
      key: I.standaloneNote,
      itemType: 'note',
      note: '<h1>Thesis plan</h1><p>Chapter 1: observations of sea-level rise. Chapter 2: attribution. Chapter 3: projections for the North Sea coast.</p>',
      tags: ['planning'],
      collections: [C.thesis],
      dateAdded: '2024-02-01T09:00:00Z',
      version: 1500,
    },
    {
      key: I.linkedFile,
      itemType: 'attachment',
      attachment: {
        title: 'Field notes 2023.pdf',
        linkMode: 'linked_file',
        path: 'attachments:fieldwork/Field notes 2023.pdf',
        contentType: 'application/pdf',
      },
      tags: ['fieldwork'],
      collections: [C.seaLevel],
      dateAdded: '2024-02-02T09:00:00Z',
      version: 1501,
    },
    {
      key: I.trashedArticle,
      itemType: 'journalArticle',
      fields: {
        title: 'A retracted study of sea level in the trash',
        publicationTitle: 'Journal of Irreproducible Results',
        date: '2012',
      },
      creators: [p('Ann', 'Onymous')],
      tags: ['sea level', 'trashed-only'],
      collections: [C.seaLevel],
      deleted: true,
      dateAdded: '2023-04-01T09:00:00Z',
      version: 1502,
      notes: ['<p>Why is this in the trash? Duplicate of another record.</p>'],
    },
    {
      itemType: 'journalArticle',
      fields: {
        title: 'Old project draft references',
        publicationTitle: 'Unpublished',
        date: '2010',
      },
      creators: [p('Ann', 'Onymous')],
      collections: [C.oldProjects],
      dateAdded: '2023-03-01T09:00:00Z',
      version: 1503,
    },
  ];
}

function groupItems(): ItemSpec[] {
  const G = SAMPLE_KEYS.group;
  return [
    {
      key: G.items.coralReport,
      itemType: 'report',
      fields: {
        title: 'Coral reef survey of the Great Barrier Reef, 2022 season',
        abstractNote: 'Group field report: bleaching extent along 40 reef transects.',
        institution: 'Ocean Lab',
        date: '2022-12-01',
      },
      creators: [p('Mele', 'Tupou'), p('Hiroshi', 'Tanaka')],
      tags: ['coral', 'fieldwork'],
      collections: [G.collections.fieldwork],
      dateAdded: '2023-01-10T09:00:00Z',
      version: 310,
      notes: ['<p>Group note: transect 17 needs re-survey.</p>'],
    },
    {
      key: G.items.groupArticle,
      itemType: 'journalArticle',
      fields: {
        title: 'Sea level and coral reef accretion (group copy)',
        publicationTitle: 'Coral Reefs',
        date: '2019',
      },
      creators: [p('Chris', 'Perry')],
      tags: ['coral', 'sea level'],
      collections: [G.collections.shared],
      dateAdded: '2023-01-11T09:00:00Z',
      version: 311,
    },
    {
      itemType: 'book',
      fields: { title: 'Coral Reefs of the World', publisher: 'Springer', date: '2016' },
      creators: [p('Charles', 'Sheppard')],
      tags: ['coral'],
      dateAdded: '2023-01-12T09:00:00Z',
      version: 312,
    },
    {
      itemType: 'webpage',
      fields: { title: 'Lab wiki: sampling protocol', url: 'https://example.org/lab/wiki/protocol' },
      tags: ['protocol'],
      collections: [G.collections.fieldwork],
      dateAdded: '2023-01-13T09:00:00Z',
      version: 313,
    },
  ];
}

/** The sample library as a fixture-builder spec. */
export function sampleLibrarySpec(): BuildSpec {
  const G = SAMPLE_KEYS.group;
  return {
    seed: 20240601,
    user: { userID: SAMPLE_KEYS.user.userID, username: 'sample-user' },
    libraries: [
      {
        type: 'user',
        version: 1600,
        collections: [
          {
            key: C.climate,
            name: 'Climate Science',
            version: 900,
            collections: [
              {
                key: C.seaLevel,
                name: 'Sea Level',
                version: 901,
                collections: [{ key: C.iceSheets, name: 'Ice Sheets', version: 902 }],
              },
              { key: C.attribution, name: 'Attribution', version: 903 },
            ],
          },
          {
            key: C.ml,
            name: 'Machine Learning',
            version: 904,
            collections: [{ key: C.transformers, name: 'Transformers', version: 905 }],
          },
          { key: C.thesis, name: 'Thesis Writing', version: 906 },
          { key: C.oldProjects, name: 'Old Projects', version: 907, deleted: true },
        ],
        items: userItems(),
        searches: [
          {
            name: 'Sea level, not trashed',
            version: 950,
            conditions: [
              { condition: 'tag', operator: 'is', value: 'sea level' },
              { condition: 'deleted', operator: 'false', value: '' },
            ],
          },
        ],
      },
      {
        type: 'group',
        groupID: G.groupID,
        name: 'Ocean Lab (shared)',
        description: 'Shared references of the Ocean Lab.',
        version: 320,
        collections: [
          { key: G.collections.fieldwork, name: 'Fieldwork', version: 300 },
          { key: G.collections.shared, name: 'Shared Reading', version: 301 },
        ],
        items: groupItems(),
      },
    ],
  };
}
