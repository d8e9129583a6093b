/** The journal file itself: retention, ZOTEUS_JOURNAL_DAYS, a damaged file, what arguments keep. */
import { mkdtempSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZoteusError } from '../../../src/core/errors.js';
import { journaledArgs } from '../../../src/core/journal/recorder.js';
import { journalDays, openJournal } from '../../../src/core/journal/store.js';

const DAY = 24 * 60 * 60 * 1000;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'zot-journal-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function journalAt(now: number, days?: number) {
  return openJournal(join(dir, 'journal.db'), { now: () => now, ...(days ? { days } : {}) });
}

function request(id: string, createdAt: number) {
  return {
    requestId: id,
    tool: 'zotero_trash_items',
    args: {},
    library: 'users/1',
    createdAt,
    undoOf: undefined,
    undo: undefined,
  };
}

describe('the journal file', () => {
  it('keeps requests for ZOTEUS_JOURNAL_DAYS days (90 by default), entries with them', async () => {
    const t0 = Date.UTC(2026, 0, 1);
    const j = journalAt(t0);
    await j.beginRequest(request('old', t0));
    await j.record('old', [
      { library: 'users/1', kind: 'items', key: 'AAAAAAAA', op: 'update', before: null, sent: {} },
    ]);
    await j.beginRequest(request('newer', t0 + 50 * DAY));
    await j.close();
    const at89 = journalAt(t0 + 89 * DAY);
    expect(await at89.request('old')).toBeDefined();
    await at89.close();
    const at91 = journalAt(t0 + 91 * DAY);
    expect(await at91.request('old')).toBeUndefined();
    expect(await at91.entries('old')).toEqual([]);
    expect(await at91.request('newer')).toBeDefined();
    await at91.close();
    const short = journalAt(t0 + 91 * DAY, 30);
    expect((await short.history({ start: 0, limit: 10 })).total).toBe(0);
    await short.close();
  });

  it('ZOTEUS_JOURNAL_DAYS: a whole number of days, else a validation_error naming it', () => {
    expect(journalDays({})).toBe(90);
    expect(journalDays({ ZOTEUS_JOURNAL_DAYS: '7' })).toBe(7);
    for (const bad of ['0', '-3', '1.5', 'week']) {
      expect(() => journalDays({ ZOTEUS_JOURNAL_DAYS: bad })).toThrow(
        expect.objectContaining({ code: 'validation_error', field: 'ZOTEUS_JOURNAL_DAYS' }),
      );
    }
  });

  it('a file that is no database is the user’s: named, with the way out, nothing written', () => {
    const path = join(dir, 'journal.db');
    writeFileSync(path, 'not a database at all, and long enough to be read as a header...........');
    let error: unknown;
    try {
      openJournal(path);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ZoteusError);
    expect(error).toMatchObject({ code: 'validation_error', field: 'ZOTEUS_DATA_DIR' });
    expect((error as Error).message).toBe(
      `The write journal ${path} cannot be used (it is not a database). Nothing was changed.`,
    );
  });

  it('a folder where the journal file should be: named as a file that cannot be opened, as the idempotency store says', () => {
    const path = join(dir, 'journal.db');
    mkdirSync(path);
    expect(() => openJournal(path)).toThrow(
      `The write journal ${path} cannot be used (it cannot be opened as a file). Nothing was changed.`,
    );
  });

  it('arguments are journaled without secrets', () => {
    const redact = (text: string) => text.split('Zk3yS3cr3t').join('[REDACTED]');
    expect(
      journaledArgs(
        { item_keys: ['AAAAAAAA'], api_key: 'x', note: 'key Zk3yS3cr3t here', upload_token: 't' },
        redact,
      ),
    ).toEqual({ item_keys: ['AAAAAAAA'], note: 'key [REDACTED] here' });
  });
});
