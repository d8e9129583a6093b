/**
 * What the write engine relies on from the client's HTTP layer: a POST carrying a
 * `Zotero-Write-Token` is resent after a connection reset, with the same token, and the
 * whole-request 412 of a token already spent surfaces as a ZoteusError whose status is 412.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newWriteToken } from '../../../src/core/zotero/index.js';
import { API_KEY, caught, errorTexts, LIB, setup, type Harness } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await setup();
});
afterEach(async () => {
  await h.close();
});

const posts = () => h.server.log.filter((e) => e.method === 'POST');

describe('write tokens', () => {
  it('a create whose answer was lost is resent with its token; the 412 that follows keeps status 412', async () => {
    let dropped = false;
    const client = h.makeClient({
      // The server saves the first attempt, then the connection "resets" before its answer.
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        if (init.method === 'POST' && !dropped) {
          dropped = true;
          await response.text();
          throw new TypeError('fetch failed', {
            cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
          });
        }
        return response;
      },
    });
    const token = newWriteToken();
    const error = await caught(
      client.request('POST', `/${LIB}/items`, {
        body: [{ key: 'ABCD2345', itemType: 'book', title: 'Landed' }],
        writeToken: token,
      }),
    );
    expect(error).toMatchObject({ code: 'conflict', status: 412 });
    expect(posts()).toHaveLength(2);
    expect(posts().map((e) => e.headers['zotero-write-token'])).toEqual([token, token]);
    expect(errorTexts(error)).not.toContain(API_KEY);
  });

  it('a POST without a token is not resent after a reset', async () => {
    h.server.faults.reset({ match: { method: 'POST' } });
    const error = await caught(h.client.request('POST', `/${LIB}/items`, { body: [{ itemType: 'book' }] }));
    expect(error.code).toBe('network_error');
    expect(posts()).toHaveLength(1);
  });
});
