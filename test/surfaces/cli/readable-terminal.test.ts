/**
 * What a person at an 80-column terminal reads (issue 16, points 1, 2 and 18), on the sample
 * library without a key: a note's text (wrapped at words, never cut), what `zot note` says of a
 * key that is itself a note, an item type's fields as a wrapped list, the whole `zot schema`
 * within the width, a Markdown evidence table printed as it is, whoami's library id from the
 * desktop, a dry run's plan once, and counts of one in the singular.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { sandbox } from '../../support/cli.js';
import { desktopSandbox } from '../../support/cli.js';
import { SAMPLE_KEYS } from '../../support/zotero-sqlite/index.js';
import { zotAt } from './terminal-harness.js';

const I = SAMPLE_KEYS.user.items;

let box: ReturnType<typeof sandbox>;
beforeEach(async () => {
  box = await desktopSandbox();
});
afterEach(() => box.cleanup());

/** At a terminal 80 columns wide (stdout and stderr terminals, no colour). */
const at80 = (args: string[]) => zotAt(args, { env: box.env, stdoutTTY: true, stderrTTY: true, columns: 80 });
/** The same command piped: the JSON envelope. */
const piped = (args: string[]) => zotAt(args, { env: box.env });

const lines = (text: string) => text.replace(/\n$/, '').split('\n');
const widths = (text: string) => lines(text).map((l) => [...l].length);

describe('a note read at a terminal', () => {
  it('zot read of a standalone note shows its text, wrapped at words', async () => {
    const r = await at80(['read', I.standaloneNote]);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      'Thesis plan [note]',
      '',
      'key           PLANNTE2',
      'itemType      note',
      'dateAdded     2024-02-01T09:00:00Z',
      'dateModified  2024-02-01T09:00:00Z',
      'tags          planning',
      'collections   Thesis Writing (THESISW2)',
      'fulltext      no',
      '',
      'Note:',
      'Thesis plan',
      'Chapter 1: observations of sea-level rise. Chapter 2: attribution. Chapter 3:',
      'projections for the North Sea coast.',
      '',
      '(sqlite, users/8675309)',
    ]);
  });

  it('zot read of a child note shows its text under its parent', async () => {
    const notes = (await piped(['note', I.seaLevelArticle])).json().data as { notes: Array<{ key: string }> };
    const key = notes.notes[0]!.key;
    const r = await at80(['read', key]);
    expect(lines(r.stdout)).toEqual([
      'Reading notes [note]',
      '',
      `key           ${key}`,
      'itemType      note',
      `parentItem    ${I.seaLevelArticle}`,
      'dateAdded     2023-05-05T09:00:00Z',
      'dateModified  2023-05-05T09:00:00Z',
      'tags          to-cite',
      'fulltext      no',
      '',
      'Note:',
      'Reading notes',
      'Acceleration of about 0.009 mm/yr² since 1880; compare with altimetry after',
      '1993.',
      '',
      '(sqlite, users/8675309)',
    ]);
  });

  it('zot note of a key that is itself a note says so and how to read it (exit 0)', async () => {
    const r = await at80(['note', I.standaloneNote]);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      'PLANNTE2 is itself a note, not an item with notes: `zot read PLANNTE2` reads its',
      'text.',
    ]);
    const data = (await piped(['note', I.standaloneNote])).json().data as Record<string, unknown>;
    expect(data).toMatchObject({ notes: [], totalResults: 0 });
    expect(data.message).toBe(
      'PLANNTE2 is itself a note, not an item with notes: `zot read PLANNTE2` reads its text.',
    );
  });

  it('an item with notes has no message', async () => {
    const data = (await piped(['note', I.seaLevelArticle])).json().data as Record<string, unknown>;
    expect(data.message).toBeUndefined();
  });

  it('zot note lists each note whole, its text wrapped, never cut with "…"', async () => {
    const r = await at80(['note', I.deepLearningBook]);
    expect(r.code).toBe(0);
    const [heading, ...rest] = lines(r.stdout);
    expect(heading).toMatch(/^Note [23456789A-Z]{8} {2}\d{4}-\d\d-\d\dT[\d:]+Z$/);
    expect(rest).toEqual([
      'Chapter 10 (sequence modeling) is the useful one for the RNN comparison.',
      '',
      'Showing 1–1 of 1 note under DEEPLRN2 (sqlite).',
    ]);
    expect(r.stdout).not.toContain('…');
    const church = await at80(['note', I.seaLevelArticle]);
    expect(lines(church.stdout).slice(1)).toEqual([
      'Reading notes',
      'Acceleration of about 0.009 mm/yr² since 1880; compare with altimetry after',
      '1993.',
      '',
      'Showing 1–1 of 1 note under CHURCH22 (sqlite).',
    ]);
    expect(lines(church.stdout)[0]).toMatch(
      /^Note [23456789A-Z]{8} {2}2023-05-05T09:00:00Z {2}tags: to-cite$/,
    );
  });
});

describe('zot item-types', () => {
  it('lists a type’s fields and creator types in full, wrapped under their label', async () => {
    const r = await at80(['item-types', 'bookSection']);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      'bookSection: 30 fields, 6 creator types (schema version 41, bundled).',
      '',
      'bookSection',
      '  fields         title, abstractNote, bookTitle (→ publicationTitle), series,',
      '                 seriesNumber, volume, numberOfVolumes, edition, date,',
      '                 publisher, place, originalDate, originalPublisher,',
      '                 originalPlace, format (→ medium), pages, ISBN, DOI,',
      '                 citationKey, url, accessDate, ISSN, archive, archiveLocation,',
      '                 shortTitle, language, libraryCatalog, callNumber, rights, extra',
      '  creator types  author, contributor, editor, bookAuthor, translator,',
      '                 seriesEditor',
    ]);
  });

  it('every type, each with its fields, within 80 columns', async () => {
    const r = await at80(['item-types']);
    expect(lines(r.stdout)[0]).toMatch(/^\d+ item types \(schema version 41, bundled\)\.$/);
    expect(r.stdout).toContain(
      '\nbook\n  fields         title, abstractNote, series, seriesNumber, volume,\n',
    );
    expect(Math.max(...widths(r.stdout))).toBeLessThanOrEqual(80);
    expect(r.stdout).not.toContain('…');
  });
});

describe('zot schema at 80 columns', () => {
  it('fits every line, with nothing cut: nested lists of objects one entry after another', async () => {
    const r = await at80(['schema']);
    expect(r.code).toBe(0);
    expect(Math.max(...widths(r.stdout))).toBeLessThanOrEqual(80);
    // Every help text of the tree is there whole (wrapping only turns spaces into line breaks).
    type Node = { help: string; params: Array<{ help: string }>; subcommands: Node[] };
    const helps = (n: Node): string[] => [
      n.help,
      ...n.params.map((p) => p.help),
      ...n.subcommands.flatMap(helps),
    ];
    const all = helps((await piped(['schema'])).json().data as Node).filter(Boolean);
    expect(all.length).toBeGreaterThan(100);
    const squashed = r.stdout.replace(/\s+/g, ' ');
    for (const help of all) expect(squashed).toContain(help.replace(/\s+/g, ' '));
    expect(r.stdout).not.toMatch(/name: /);
  });

  it('a node’s params read as entries with their whole help', async () => {
    const r = await at80(['schema', 'collection', 'list']);
    expect(lines(r.stdout).slice(0, 16)).toEqual([
      'name         collection list',
      'help         List the collections of a library (key, name, parent, item count),',
      '             sorted by name; --q finds one by name.',
      'safety_tier  read',
      'since        0.1.0',
      'deprecated   false',
      'mcp_tool     zotero_list_collections',
      'params',
      '  - name      q',
      '    kind      option',
      '    type      string',
      '    required  false',
      '    flags     --q',
      '    help      Only collections whose name contains this text (case-insensitive),',
      '              searched over the whole library, not one page. Use it to find a',
      '              collection by name.',
    ]);
  });
});

describe('a document is printed as it is', () => {
  const rows = [
    {
      item_key: 'KLMN2345',
      study: 'Kim 2021',
      finding: 'Sleep quality improved after 12 weeks of aerobic exercise.',
      quotation: 'Participants in the exercise arm reported better sleep (PSQI −2.1).',
      page: 5,
      page_exact: true,
      coverage: 'passage',
      support: 'supported',
    },
  ];
  const question = 'Does exercise improve sleep quality in adults?';

  it('zot evidence-table at 80 columns prints the Markdown table byte for byte, rows unbroken', async () => {
    const file = join(box.dir, 'rows.json');
    writeFileSync(file, JSON.stringify(rows));
    const args = ['evidence-table', '--question', question, '--rows', file];
    const table = ((await piped(args)).json().data as { table: string }).table;
    const row =
      '| Kim 2021 (KLMN2345) | Sleep quality improved after 12 weeks of aerobic exercise. | Participants in the exercise arm reported better sleep (PSQI −2.1). | 5 (exact) | passage | supported |';
    expect(table.split('\n')).toContain(row);
    const r = await at80(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(table.endsWith('\n') ? table : `${table}\n`);
    const csv = await at80([...args, '--format', 'csv']);
    const csvTable = ((await piped([...args, '--format', 'csv'])).json().data as { table: string }).table;
    expect(csv.stdout.replace(/\n$/, '')).toBe(csvTable.replace(/\n$/, ''));
  });

  it('its dry run shows the table under its label, unwrapped', async () => {
    const file = join(box.dir, 'rows.json');
    writeFileSync(file, JSON.stringify(rows));
    const r = await at80(['evidence-table', '--question', question, '--rows', file, '--dry-run']);
    expect(r.code).toBe(0);
    expect(lines(r.stdout).slice(0, 5)).toEqual([
      'Would run zot evidence-table.',
      'format     markdown',
      'row count  1',
      'table',
      `Table: ${question}`,
    ]);
    expect(r.stdout).toContain(
      '\n| Kim 2021 (KLMN2345) | Sleep quality improved after 12 weeks of aerobic exercise. | Participants in the exercise arm reported better sleep (PSQI −2.1). | 5 (exact) | passage | supported |\n',
    );
  });
});

describe('zot whoami on the desktop’s data', () => {
  it('says the default library’s id, from the account the desktop is signed in to', async () => {
    const data = (await piped(['whoami'])).json().data as { library: Record<string, unknown> };
    expect(data.library).toEqual({
      type: 'user',
      id: 8675309,
      source: 'desktop',
      description: "users/8675309 (the desktop app's personal library)",
    });
    const r = await at80(['whoami']);
    expect(lines(r.stdout)).toContain('library.id                     8675309');
    expect(lines(r.stdout).slice(0, 3)).toEqual([
      "Zoteus 0.2.0; default library: users/8675309 (the desktop app's personal",
      'library); web API: not configured; desktop: zotero.sqlite; writes cannot go',
      'anywhere yet (writes.reason says why).',
    ]);
    expect(Math.max(...widths(r.stdout))).toBeLessThanOrEqual(80);
  });
});

describe('a dry run at a terminal', () => {
  it('zot trash --dry-run shows the plan once, in words', async () => {
    const r = await at80(['trash', I.seaLevelArticle, '--dry-run']);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      "Would run zot trash in the desktop app's personal library.",
      'action      trash',
      'item keys   CHURCH22',
      'reversible  yes',
      'requests    at most 2',
    ]);
    expect(r.stderr).toBe('Dry run: nothing was changed.\n');
    // The JSON envelope is unchanged: the arguments and the plan both.
    const would = ((await piped(['trash', I.seaLevelArticle, '--dry-run'])).json().data as { would: unknown })
      .would;
    expect(would).toMatchObject({ command: 'trash', args: { item_keys: ['CHURCH22'] }, action: 'trash' });
  });

  it('zot create --dry-run counts the items by type, without the file’s JSON', async () => {
    const file = join(box.dir, 'items.json');
    writeFileSync(
      file,
      JSON.stringify([
        { itemType: 'journalArticle', title: 'A study of ice', date: '2020' },
        { itemType: 'book', title: 'Oceans' },
      ]),
    );
    const r = await at80(['create', file, '--dry-run']);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      "Would run zot create in the desktop app's personal library.",
      'items           2',
      'item types      journalArticle: 1, book: 1',
      'write requests  1',
      'schema version  41',
    ]);
  });
});

describe('counts of one', () => {
  it('a page of one item says "1 item"', async () => {
    const r = await at80(['search', 'Attention Is All You Need']);
    expect(lines(r.stdout).at(-1)).toBe(
      'Showing 1–1 of 1 item matching "Attention Is All You Need" (sqlite).',
    );
    const tags = await at80(['tag', 'list', '--q', 'sea']);
    expect(lines(tags.stdout).at(-1)).toBe('Showing 1–1 of 1 tag containing "sea" (sqlite).');
    const collections = await at80(['collection', 'list', '--q', 'Thesis']);
    expect(lines(collections.stdout).at(-1)).toBe('Showing 1–1 of 1 collection matching "Thesis".');
  });

  it('an invalid batch of one says "The item is invalid"; of two, "1 of 2 items is invalid"', async () => {
    const one = join(box.dir, 'one.json');
    writeFileSync(one, JSON.stringify([{ itemType: 'book', title: 'A', nope: 'x' }]));
    const r = await piped(['create', one]);
    expect(r.code).toBe(3);
    expect((r.json().error as { message: string }).message).toBe(
      "The item is invalid (1 problem); nothing was written: items[0].nope: 'nope' is not a field of book.",
    );
    const two = join(box.dir, 'two.json');
    writeFileSync(
      two,
      JSON.stringify([
        { itemType: 'book', title: 'A' },
        { itemType: 'book', nope: 'x' },
      ]),
    );
    expect(((await piped(['create', two])).json().error as { message: string }).message).toBe(
      "1 of 2 items is invalid (1 problem); nothing was written: items[1].nope: 'nope' is not a field of book.",
    );
  });
});
