/**
 * zotero_list_annotations on the three backends: zotero.sqlite, the desktop's local API and the
 * Web API hold the same sample library (the test server mirrors the database) and must answer
 * with the same annotations, field for field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyTool, Deps } from '../../../src/core/tool.js';
import listAnnotations from '../../../src/tools/annotations/list-annotations.js';
import type { AttachmentSpec, ItemSpec } from '../../support/zotero-sqlite/index.js';
import {
  DEAD_LOCAL_API,
  KEY,
  SAMPLE_KEYS,
  sampleLibrarySpec,
  startDesktopWorld,
  USER_ID,
  type DesktopWorld,
} from '../../core/library/router-world.js';

let world: DesktopWorld;
const I = SAMPLE_KEYS.user.items;
type Backend = 'sqlite' | 'localApi' | 'web';
let deps: Record<Backend, Deps>;

beforeAll(async () => {
  world = await startDesktopWorld({ localApi: true });
  deps = {
    web: world.deps({ env: { ZOTEUS_LOCAL: 'off', ZOTERO_API_KEY: KEY } }),
    localApi: world.deps(),
    sqlite: world.deps({ env: { ZOTEUS_LOCAL_API_URL: DEAD_LOCAL_API } }),
  };
});
afterAll(async () => {
  await world?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function run(input: Record<string, unknown>, d: Deps): Promise<any> {
  const tool = listAnnotations as unknown as AnyTool;
  return tool.output.parse(await tool.run(tool.input.parse(input), d));
}

const BACKENDS: Backend[] = ['sqlite', 'localApi', 'web'];

describe('zotero_list_annotations', () => {
  it('lists an item’s annotations through its attachments, the same from every backend', async () => {
    const answers = await Promise.all(BACKENDS.map((b) => run({ item_key: I.seaLevelArticle }, deps[b])));
    expect(answers.map((a) => a.backend)).toEqual(BACKENDS);
    const [sqlite, ...others] = answers;
    expect(sqlite.annotations).toEqual([
      {
        key: expect.stringMatching(/^[23456789A-Z]{8}$/),
        version: expect.any(Number),
        attachmentKey: expect.stringMatching(/^[23456789A-Z]{8}$/),
        type: 'highlight',
        text: 'a rate of 3.2 mm per year since 1993',
        comment: 'Key number for chapter 2',
        color: '#ffd400',
        pageLabel: '587',
        sortIndex: '00002|000410|00120',
        position: { pageIndex: 0, rects: [[100, 100, 200, 120]] },
        tags: [],
        dateModified: expect.any(String),
      },
      {
        key: expect.any(String),
        version: expect.any(Number),
        attachmentKey: sqlite.annotations[0].attachmentKey,
        type: 'note',
        comment: 'Check the Antarctic term against IMBIE.',
        color: '#5fb236',
        pageLabel: '590',
        sortIndex: '00005|000000|00300',
        position: { pageIndex: 0, rects: [[100, 100, 200, 120]] },
        tags: [],
        dateModified: expect.any(String),
      },
    ]);
    expect(sqlite).toMatchObject({
      itemKey: I.seaLevelArticle,
      totalResults: 2,
      library: `users/${USER_ID}`,
    });
    for (const other of others) {
      expect(other.annotations).toEqual(sqlite.annotations);
      expect(other.totalResults).toBe(2);
    }
  });

  it('the attachment’s key lists its own annotations, the same from every backend', async () => {
    const attachment = (await run({ item_key: I.seaLevelArticle }, deps.sqlite)).annotations[0].attachmentKey;
    const answers = await Promise.all(BACKENDS.map((b) => run({ item_key: attachment }, deps[b])));
    for (const a of answers) {
      expect(a.itemKey).toBe(attachment);
      expect(a.annotations.map((r: { type: string }) => r.type)).toEqual(['highlight', 'note']);
      expect(a.annotations).toEqual(answers[0].annotations);
    }
  });

  it('pages with start and limit: nextStart until the last page', async () => {
    for (const b of BACKENDS) {
      const first = await run({ item_key: I.seaLevelArticle, limit: 1 }, deps[b]);
      expect(first).toMatchObject({ totalResults: 2, start: 0, nextStart: 1, truncated: true });
      expect(first.annotations.map((a: { type: string }) => a.type)).toEqual(['highlight']);
      const second = await run({ item_key: I.seaLevelArticle, limit: 1, start: 1 }, deps[b]);
      expect(second.annotations.map((a: { type: string }) => a.type)).toEqual(['note']);
      expect(second.nextStart).toBeUndefined();
      expect(second.truncated).toBeUndefined();
    }
  });

  it('a note has no annotations and says so; an unknown key is not_found', async () => {
    for (const b of BACKENDS) {
      const note = await run({ item_key: I.standaloneNote }, deps[b]);
      expect(note.annotations).toEqual([]);
      expect(note.message).toBe(
        `${I.standaloneNote} is a note: annotations are on attachments (PDF, EPUB, snapshot).`,
      );
      await expect(run({ item_key: 'ZZZZ2345' }, deps[b])).rejects.toMatchObject({
        code: 'not_found',
        message: `No item "ZZZZ2345" in users/${USER_ID}.`,
      });
    }
  });

  it('text mode shows the passage, the comment and the page', () => {
    const tool = listAnnotations as unknown as AnyTool;
    const text = tool.text!(
      {
        backend: 'sqlite',
        library: 'users/1',
        itemKey: 'ABCD2345',
        annotations: [
          {
            key: 'ANNO2345',
            version: 1,
            attachmentKey: 'ATTA2345',
            type: 'highlight',
            text: 'the passage',
            comment: 'why it matters',
            color: '#ffd400',
            pageLabel: '12',
            sortIndex: '00011|000000|00100',
            tags: [],
          },
        ],
        totalResults: 1,
        start: 0,
        provenance: '',
      },
      {} as never,
    );
    expect(text).toBe(
      [
        'highlight ANNO2345  p. 12  #ffd400  on ATTA2345',
        '  “the passage”',
        '  why it matters',
        'Showing 1–1 of 1 annotation under ABCD2345 (sqlite).',
      ].join('\n'),
    );
  });
});

describe('zotero_list_annotations: underlines and images', () => {
  let other: DesktopWorld;
  let on: Record<Backend, Deps>;
  const UNDERLINE_POSITION = { pageIndex: 1, rects: [[72, 640.5, 301.25, 652]] };
  const IMAGE_POSITION = { pageIndex: 2, rects: [[90, 300, 420, 560]] };
  beforeAll(async () => {
    // The sample library, with an underline and an image on the sea-level PDF.
    const spec = sampleLibrarySpec();
    const article = spec.libraries[0]!.items!.find((i) => i.key === I.seaLevelArticle) as ItemSpec;
    const pdf = article.attachments![0] as AttachmentSpec;
    pdf.annotations = [
      ...(pdf.annotations ?? []),
      {
        type: 'underline',
        text: 'Thermosteric expansion and glacier melt',
        comment: '',
        color: '#2ea8e5',
        pageLabel: '588',
        sortIndex: '00003|000120|00140',
        position: UNDERLINE_POSITION,
      },
      {
        type: 'image',
        comment: 'Figure 3: the altimetry record',
        color: '#a28ae5',
        pageLabel: '589',
        sortIndex: '00004|000000|00232',
        position: IMAGE_POSITION,
      },
    ];
    other = await startDesktopWorld({ localApi: true, spec });
    on = {
      web: other.deps({ env: { ZOTEUS_LOCAL: 'off', ZOTERO_API_KEY: KEY } }),
      localApi: other.deps(),
      sqlite: other.deps({ env: { ZOTEUS_LOCAL_API_URL: DEAD_LOCAL_API } }),
    };
  });
  afterAll(async () => {
    await other?.close();
  });

  it('an underline has its text, an image none; both with colour, page, position; the same from every backend', async () => {
    const answers = await Promise.all(BACKENDS.map((b) => run({ item_key: I.seaLevelArticle }, on[b])));
    expect(answers.map((a) => a.backend)).toEqual(BACKENDS);
    const [sqlite, ...others] = answers;
    expect(sqlite.totalResults).toBe(4);
    expect(sqlite.annotations.map((a: { type: string }) => a.type)).toEqual([
      'highlight',
      'underline',
      'image',
      'note',
    ]);
    const attachmentKey = sqlite.annotations[0].attachmentKey as string;
    expect(sqlite.annotations[1]).toEqual({
      key: expect.stringMatching(/^[23456789A-Z]{8}$/),
      version: expect.any(Number),
      attachmentKey,
      type: 'underline',
      text: 'Thermosteric expansion and glacier melt',
      comment: '',
      color: '#2ea8e5',
      pageLabel: '588',
      sortIndex: '00003|000120|00140',
      position: UNDERLINE_POSITION,
      tags: [],
      dateModified: expect.any(String),
    });
    expect(sqlite.annotations[2]).toEqual({
      key: expect.stringMatching(/^[23456789A-Z]{8}$/),
      version: expect.any(Number),
      attachmentKey,
      type: 'image',
      comment: 'Figure 3: the altimetry record',
      color: '#a28ae5',
      pageLabel: '589',
      sortIndex: '00004|000000|00232',
      position: IMAGE_POSITION,
      tags: [],
      dateModified: expect.any(String),
    });
    for (const o of others) {
      expect(o.annotations).toEqual(sqlite.annotations);
      expect(o.totalResults).toBe(4);
    }
  });
});
