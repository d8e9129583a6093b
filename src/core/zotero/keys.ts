/**
 * `GET /keys/current`: who the key belongs to and what it may do. The key itself is dropped
 * from the answer so it cannot travel further than the header it came in.
 */
import { ZoteusError } from '../errors.js';
import type { Http } from './http.js';
import type { CallContext, KeyAccess, KeyInfo } from './types.js';

function bad(http: Http): ZoteusError {
  return new ZoteusError(
    'api_error',
    http.redact('The Zotero API answered GET /keys/current with an unexpected body.'),
    {
      hint: 'Check ZOTERO_API_URL: it should point at a Zotero Web API v3 server.',
    },
  );
}

export async function getKeyInfo(
  http: Http,
  options: { call?: CallContext | undefined } = {},
): Promise<KeyInfo> {
  if (!http.hasKey) {
    throw new ZoteusError('auth_missing', 'No Zotero API key is configured.', {
      hint: 'Set ZOTERO_API_KEY (create a key at https://www.zotero.org/settings/keys).',
    });
  }
  const response = await http.request<Record<string, unknown>>('GET', '/keys/current', {
    call: options.call,
  });
  const body = response.data;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw bad(http);
  const userID =
    typeof body.userID === 'string' && /^\d+$/.test(body.userID) ? Number(body.userID) : body.userID;
  if (typeof userID !== 'number' || !Number.isSafeInteger(userID)) throw bad(http);
  const username = typeof body.username === 'string' ? body.username : '';
  const displayName = typeof body.displayName === 'string' && body.displayName ? body.displayName : username;
  const access = body.access !== null && typeof body.access === 'object' ? (body.access as KeyAccess) : {};
  return { userID, username, displayName, access };
}
