/** Library addresses refused in the user's terms (issue 16, point 11): one's own user id given as a group's. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zotAt } from '../surfaces/cli/terminal-harness.js';
import { SAMPLE_KEYS, startSample, type Sample } from './items/read/setup.js';

let sample: Sample;
beforeAll(async () => {
  sample = await startSample();
});
afterAll(() => sample?.close());

describe('--library-id with the user’s own id', () => {
  it('says the id is the user library’s and how to address it', async () => {
    const id = String(SAMPLE_KEYS.user.userID);
    const r = await zotAt(['search', 'sea', '--library-id', id], { env: sample.env() });
    expect(r.code).toBe(4);
    const error = r.json().error as { message: string; hint: string; field: string };
    expect(error.field).toBe('library_id');
    expect(error.message).toContain(`(${id} is the id of your own user library)`);
    expect(error.hint).toBe(
      'An id given alone names a group: add --library-type user to read your own library, or leave out --library-id (it is the default).',
    );
    const fixed = await zotAt(['search', 'sea', '--library-id', id, '--library-type', 'user'], {
      env: sample.env(),
    });
    expect(fixed.code).toBe(0);
  });
});

describe('--collection with a key that names no collection', () => {
  it('names the library and how to find keys; a key in lower case is told its upper case', async () => {
    const r = await zotAt(['list', '--collection', 'ZZZZ2345'], { env: sample.env() });
    expect(r.code).toBe(4);
    const error = r.json().error as { message: string; hint: string; field: string };
    expect(error.message).toBe(`No collection "ZZZZ2345" in users/${SAMPLE_KEYS.user.userID}.`);
    expect(error.field).toBe('collection_key');
    expect(error.hint).toBe(
      '`zot collection list --q NAME` finds collection keys (8 characters, upper case).',
    );
    const lower = await zotAt(['list', '--collection', 'climate2'], { env: sample.env() });
    expect(lower.code).toBe(3);
    expect((lower.json().error as { message: string }).message).toMatch(
      /; keys are upper case: did you mean 'CLIMATE2'\?$/,
    );
  });
});
