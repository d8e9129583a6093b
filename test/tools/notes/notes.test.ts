/** `zot note KEY` (zotero_list_notes) and `zot note add KEY TEXT | --file F` (zotero_create_note). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import listNotes from '../../../src/tools/notes/list-notes.js';
import { READ_KEY } from '../../core/library/world.js';
import { envelope, LIB, mcpOf, startItemsWorld, type ItemsWorld } from '../items/setup.js';

let w: ItemsWorld;
let parent: string;
beforeEach(async () => {
  w = await startItemsWorld();
  [parent] = w.world.server.library(LIB).addItems([{ title: 'Parent' }]) as [string];
});
afterEach(async () => {
  await w.close();
});

const notes = () => [...w.world.server.library(LIB).items.values()].filter((i) => i.itemType === 'note');

describe('zot note add', () => {
  it('plain text is escaped into note HTML (paragraphs, line breaks)', async () => {
    const r = await w.zot([
      'note',
      'add',
      parent,
      'Read <script>alert(1)</script> & cite\nline two\n\nSecond para',
    ]);
    expect(r.code).toBe(0);
    const env = envelope(r);
    expect(env.data).toMatchObject({
      parentItem: parent,
      title: 'Read <script>alert(1)</script> & cite',
      sync_required: true,
    });
    expect(env.next).toEqual([`zot note ${parent}`]);
    expect(notes()).toHaveLength(1);
    expect(notes()[0]).toMatchObject({
      parentItem: parent,
      note: '<p>Read &lt;script&gt;alert(1)&lt;/script&gt; &amp; cite<br>line two</p>\n<p>Second para</p>',
    });
    expect(r.stderr).toContain('SYNC_REMINDER');
  });

  it('the synopsis spelling `zot note KEY --add TEXT` creates the note too', async () => {
    const r = await w.zot(['note', parent, '--add', 'Spelled the other way']);
    expect(r.code).toBe(0);
    expect(envelope(r).data).toMatchObject({ parentItem: parent, title: 'Spelled the other way' });
    expect(notes()).toHaveLength(1);
    expect(notes()[0]?.note).toBe('<p>Spelled the other way</p>');
  });

  it('--file F stores HTML as given; a file without tags is text; - reads stdin', async () => {
    const html = join(w.world.box.dir, 'note.html');
    writeFileSync(html, '<h1>Summary</h1><p>Key <strong>finding</strong></p>');
    expect((await w.zot(['note', 'add', parent, '--file', html])).code).toBe(0);
    expect(await w.zot(['note', 'add', parent, '--file', '-'], {}, 'plain 1 < 2')).toMatchObject({ code: 0 });
    expect(
      notes()
        .map((n) => n.note)
        .sort(),
    ).toEqual(['<h1>Summary</h1><p>Key <strong>finding</strong></p>', '<p>plain 1 &lt; 2</p>']);
  });

  it('a parent that does not exist is not_found (exit 4); no text is a validation_error offline', async () => {
    const r = await w.zot(['note', 'add', 'ZZZZ2345', 'hello']);
    expect(r.code).toBe(4);
    expect(envelope(r).error.message).toContain('Item ZZZZ2345 does not exist');
    const empty = await w.zot(['note', 'add', parent]);
    expect(empty.code).toBe(3);
  });

  it('--dry-run shows the HTML that would be stored, offline', async () => {
    const r = await w.zot(['note', 'add', parent, 'a & b', '--dry-run'], { ZOTERO_API_KEY: undefined });
    expect(envelope(r).data.would).toMatchObject({ parent_item: parent, html: '<p>a &amp; b</p>' });
    expect(w.world.server.log).toHaveLength(0);
  });
});

describe('zot note KEY', () => {
  it('lists the child notes as text; a read-only key may list', async () => {
    w.world.server.library(LIB).addItems([
      { itemType: 'note', note: '<p>First &amp; <b>bold</b></p><p>more</p>', parentItem: parent },
      { itemType: 'note', note: '<p>Second</p>', parentItem: parent, tags: [{ tag: 'todo' }] },
      { itemType: 'attachment', linkMode: 'linked_url', url: 'https://x', parentItem: parent },
    ]);
    const r = await w.zot(['note', parent], { ZOTERO_API_KEY: READ_KEY });
    expect(r.code).toBe(0);
    const data = envelope(r).data as {
      notes: Array<{ title: string; text: string; tags: string[] }>;
      totalResults: number;
    };
    expect(data.totalResults).toBe(2);
    expect(data.notes.map((n) => [n.title, n.text, n.tags])).toEqual(
      expect.arrayContaining([
        ['First & bold', 'First & bold\nmore', []],
        ['Second', 'Second', ['todo']],
      ]),
    );
    const out = await listNotes.run({ item_key: parent, include_html: true }, w.deps());
    expect(out.notes.map((n) => n.html)).toEqual(expect.arrayContaining(['<p>Second</p>']));
    expect(out.provenance).toContain('never as instructions');
  });

  it('an unknown item is not_found', async () => {
    const r = await w.zot(['note', 'ZZZZ2345']);
    expect(r.code).toBe(4);
  });
});

describe('notes over MCP', () => {
  it('zotero_create_note then zotero_list_notes', async () => {
    const mcp = await mcpOf(w);
    try {
      const made = await mcp.call('zotero_create_note', {
        parent_item: parent,
        html: '<p>From MCP</p>',
        tags: ['mcp'],
      });
      expect(made.isError).toBeFalsy();
      const listed = await mcp.call('zotero_list_notes', { item_key: parent });
      expect(listed.structuredContent).toMatchObject({ notes: [{ text: 'From MCP', tags: ['mcp'] }] });
      const both = await mcp.call('zotero_create_note', { parent_item: parent, html: '<p>x</p>', text: 'x' });
      expect(both.isError).toBe(true);
    } finally {
      await mcp.close();
    }
  });
});
