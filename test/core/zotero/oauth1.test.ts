/**
 * Zotero's OAuth 1.0a sign-in as a client: RFC 5849's signing byte for byte, the whole
 * handshake against the loopback fake of Zotero's endpoints (which recomputes every signature),
 * every refusal in the person's terms, and no secret in any error.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZoteusError } from '../../../src/core/errors.js';
import {
  authorizationHeader,
  baseStringUri,
  hmacSha1Signature,
  percentEncode,
  signatureBaseString,
  signRequest,
  zoteroOAuthSettings,
  zoteroSignIn,
  type OAuthParam,
  type ZoteroOAuthSettings,
} from '../../../src/core/zotero/oauth1.js';
import { startZoteroServer } from '../../support/zotero-server/index.js';
import { startZoteroOAuthServer, type ZoteroOAuthFake } from '../../support/zotero-oauth-server.js';
import { caught, errorTexts } from './helpers.js';

/** Every error of this file, and every secret it saw: none may appear in any (checked at the end). */
const errors: ZoteusError[] = [];
const secrets = new Set<string>();

async function failure(promise: Promise<unknown>): Promise<ZoteusError> {
  const error = await caught(promise);
  errors.push(error);
  return error;
}

function failureSync(run: () => unknown): ZoteusError {
  try {
    run();
  } catch (error) {
    if (!(error instanceof ZoteusError)) throw error;
    errors.push(error);
    return error;
  }
  throw new Error('expected a throw');
}

afterAll(() => {
  expect(errors.length).toBeGreaterThan(10);
  for (const error of errors) {
    const text = errorTexts(error);
    for (const secret of secrets) expect(text).not.toContain(secret);
  }
});

describe('RFC 5849 signing', () => {
  const client = { key: 'dpf43f3p2l4k3l03', secret: 'kd94hf93k423kf44' };
  const base = (extra: Record<string, string>): OAuthParam[] => [
    ['oauth_consumer_key', client.key],
    ['oauth_signature_method', 'HMAC-SHA1'],
    ...Object.entries(extra),
  ];

  it('§1.2 step 1: the request token (no token secret)', () => {
    const params = base({
      oauth_timestamp: '137131200',
      oauth_nonce: 'wIjqoS',
      oauth_callback: 'http://printer.example.com/ready',
    });
    const text = signatureBaseString('POST', 'https://photos.example.net/initiate', params);
    expect(text).toBe(
      'POST&https%3A%2F%2Fphotos.example.net%2Finitiate&oauth_callback%3Dhttp%253A%252F%252Fprinter.example.com%252Fready%26oauth_consumer_key%3Ddpf43f3p2l4k3l03%26oauth_nonce%3DwIjqoS%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131200',
    );
    expect(hmacSha1Signature(text, client.secret)).toBe('74KNZJeDHnMBp0EMJ9ZHt/XKycU=');
  });

  it('§1.2 step 3: the access token, keyed with the request token secret', () => {
    const params = base({
      oauth_token: 'hh5s93j4hdidpola',
      oauth_timestamp: '137131201',
      oauth_nonce: 'walatlh',
      oauth_verifier: 'hfdp7dh39dks9884',
    });
    const text = signatureBaseString('POST', 'https://photos.example.net/token', params);
    expect(hmacSha1Signature(text, client.secret, 'hdhd0244k9j7ao03')).toBe('gKgrFCywp7rO0OXSjdot/IHF7IU=');
  });

  it('§1.2 a resource: the query joins the parameters, the URI loses it', () => {
    const params = base({
      oauth_token: 'nnch734d00sl2jdk',
      oauth_timestamp: '137131202',
      oauth_nonce: 'chapoH',
      // Left out wherever it stands.
      oauth_signature: 'ignored',
    });
    const text = signatureBaseString(
      'GET',
      'http://photos.example.net/photos?file=vacation.jpg&size=original',
      params,
    );
    expect(text.startsWith('GET&http%3A%2F%2Fphotos.example.net%2Fphotos&file%3Dvacation.jpg%26')).toBe(true);
    expect(hmacSha1Signature(text, client.secret, 'pfkkdhi9sl3r4s00')).toBe('MdpQcU8iPSUjWoN/UDMsK2sui9I=');
  });

  it('§3.4.1.1: repeated names, encoded names and values, a form body, sorted by encoded name then value', () => {
    const url = 'http://example.com/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b';
    const params: OAuthParam[] = [
      ['oauth_consumer_key', '9djdj82h48djs9d2'],
      ['oauth_token', 'kkk9d7dh3k39sjv7'],
      ['oauth_signature_method', 'HMAC-SHA1'],
      ['oauth_timestamp', '137131201'],
      ['oauth_nonce', '7d8f3e4a'],
      ...new URLSearchParams('c2&a3=2+q'),
    ];
    expect(signatureBaseString('post', url, params)).toBe(
      'POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7',
    );
  });

  it('§3.4.1.2 URIs and §3.6 encoding', () => {
    expect(baseStringUri('HTTP://EXAMPLE.COM:80/r%20v/X?id=123')).toBe('http://example.com/r%20v/X');
    expect(baseStringUri('https://www.example.net:8080/?q=1')).toBe('https://www.example.net:8080/');
    expect(baseStringUri('https://www.example.net:443/a#frag')).toBe('https://www.example.net/a');
    expect(percentEncode("a b*c~d!e'(f)-_.é+")).toBe('a%20b%2Ac~d%21e%27%28f%29-_.%C3%A9%2B');
    expect(authorizationHeader([['oauth_callback', 'http://x/?a=1']])).toBe(
      'OAuth oauth_callback="http%3A%2F%2Fx%2F%3Fa%3D1"',
    );
  });
});

describe('settings from the environment', () => {
  it('neither key nor secret: no sign-in; both: the default endpoints or the configured base', () => {
    expect(zoteroOAuthSettings({})).toBeUndefined();
    expect(
      zoteroOAuthSettings({ ZOTEUS_ZOTERO_OAUTH_KEY: '', ZOTEUS_ZOTERO_OAUTH_URL: 'http://x' }),
    ).toBeUndefined();
    expect(
      zoteroOAuthSettings({ ZOTEUS_ZOTERO_OAUTH_KEY: 'k1234567', ZOTEUS_ZOTERO_OAUTH_SECRET: 's1234567' }),
    ).toEqual({
      clientKey: 'k1234567',
      clientSecret: 's1234567',
      requestUrl: 'https://www.zotero.org/oauth/request',
      authorizeUrl: 'https://www.zotero.org/oauth/authorize',
      accessUrl: 'https://www.zotero.org/oauth/access',
    });
    expect(
      zoteroOAuthSettings({
        ZOTEUS_ZOTERO_OAUTH_KEY: 'k1234567',
        ZOTEUS_ZOTERO_OAUTH_SECRET: 's1234567',
        ZOTEUS_ZOTERO_OAUTH_URL: 'http://127.0.0.1:9/oauth/',
      })?.accessUrl,
    ).toBe('http://127.0.0.1:9/oauth/access');
  });

  it('one without the other is a validation_error naming the missing one, never echoing the secret', () => {
    secrets.add('TopSecret0123456789');
    const noKey = failureSync(() =>
      zoteroOAuthSettings({ ZOTEUS_ZOTERO_OAUTH_SECRET: 'TopSecret0123456789' }),
    );
    expect(noKey.code).toBe('validation_error');
    expect(noKey.field).toBe('ZOTEUS_ZOTERO_OAUTH_KEY');
    expect(noKey.message).toBe(
      'ZOTEUS_ZOTERO_OAUTH_KEY is not set, but ZOTEUS_ZOTERO_OAUTH_SECRET is: signing in with Zotero needs both the client key and the client secret of the application registered at Zotero.',
    );
    const noSecret = failureSync(() => zoteroOAuthSettings({ ZOTEUS_ZOTERO_OAUTH_KEY: 'abc123' }));
    expect(noSecret.field).toBe('ZOTEUS_ZOTERO_OAUTH_SECRET');
    expect(noSecret.hint).toBe(
      'Set ZOTEUS_ZOTERO_OAUTH_SECRET from https://www.zotero.org/oauth/apps (or unset ZOTEUS_ZOTERO_OAUTH_KEY to turn sign-in with Zotero off).',
    );
  });

  it('a bad secret or URL is refused by name, the secret never shown', () => {
    const short = failureSync(() =>
      zoteroOAuthSettings({ ZOTEUS_ZOTERO_OAUTH_KEY: 'k1234567', ZOTEUS_ZOTERO_OAUTH_SECRET: 'Secr3t' }),
    );
    expect(short.message).toContain('ZOTEUS_ZOTERO_OAUTH_SECRET is too short (6 characters');
    expect(errorTexts(short)).not.toContain('Secr3t');
    secrets.add('TopSecret 0123456789');
    const spaced = failureSync(() =>
      zoteroOAuthSettings({
        ZOTEUS_ZOTERO_OAUTH_KEY: 'k1234567',
        ZOTEUS_ZOTERO_OAUTH_SECRET: 'TopSecret 0123456789',
      }),
    );
    expect(spaced.field).toBe('ZOTEUS_ZOTERO_OAUTH_SECRET');
    const url = failureSync(() =>
      zoteroOAuthSettings({
        ZOTEUS_ZOTERO_OAUTH_KEY: 'k1234567',
        ZOTEUS_ZOTERO_OAUTH_SECRET: 'TopSecret0123456789',
        ZOTEUS_ZOTERO_OAUTH_URL: 'ftp://zotero.org/oauth',
      }),
    );
    expect(url.field).toBe('ZOTEUS_ZOTERO_OAUTH_URL');
    expect(url.message).toContain("got 'ftp://zotero.org/oauth'");
  });
});

let fake: ZoteroOAuthFake;
let settings: ZoteroOAuthSettings;
beforeEach(async () => {
  fake = await startZoteroOAuthServer();
  settings = zoteroOAuthSettings(fake.env())!;
  secrets.add(fake.clientSecret);
  secrets.add(fake.user.apiKey);
});
afterEach(async () => {
  await fake.close();
});

const CALLBACK = 'http://127.0.0.1:9/oauth/zotero/callback?state=s-1';

/** Steps 1 and 2: a request token, and the verifier the person's browser brings back. */
async function approve(signIn = zoteroSignIn(settings)) {
  const begun = await signIn.begin(CALLBACK);
  secrets.add(begun.requestTokenSecret);
  const answer = await fetch(begun.authorizeUrl, { redirect: 'manual' });
  expect(answer.status).toBe(302);
  const back = new URL(answer.headers.get('location')!);
  return { ...begun, back, verifier: back.searchParams.get('oauth_verifier') ?? '' };
}

describe('the handshake against the fake', () => {
  it('begin → approve at Zotero → complete yields the key, the user id and name, in three signed requests', async () => {
    const signIn = zoteroSignIn(settings);
    const begun = await approve(signIn);
    const authorize = new URL(begun.authorizeUrl);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${fake.base}/authorize`);
    expect(Object.fromEntries(authorize.searchParams)).toEqual({
      oauth_token: begun.requestToken,
      library_access: '1',
      notes_access: '1',
      write_access: '1',
      all_groups: 'write',
      name: 'Zoteus',
    });
    // The callback keeps its own query and gets the token and the verifier.
    expect(`${begun.back.origin}${begun.back.pathname}`).toBe('http://127.0.0.1:9/oauth/zotero/callback');
    expect(begun.back.searchParams.get('state')).toBe('s-1');
    expect(begun.back.searchParams.get('oauth_token')).toBe(begun.requestToken);
    expect(begun.verifier).toMatch(/^[A-Za-z0-9]{20}$/);

    const done = await signIn.complete(begun.requestToken, begun.requestTokenSecret, begun.verifier);
    expect(done).toEqual({ apiKey: fake.user.apiKey, userId: 475_425, username: 'z_public' });

    expect(fake.requests.map((r) => [r.method, r.path, r.status])).toEqual([
      ['POST', '/oauth/request', 200],
      ['GET', '/oauth/authorize', 302],
      ['POST', '/oauth/access', 200],
    ]);
    const [step1, , step3] = fake.requests;
    expect(step1!.authorization).toMatch(/^OAuth oauth_consumer_key="/);
    expect(step1!.params).toMatchObject({
      oauth_consumer_key: fake.clientKey,
      oauth_callback: CALLBACK,
      oauth_signature_method: 'HMAC-SHA1',
      oauth_version: '1.0',
    });
    expect(step1!.params['oauth_token']).toBeUndefined();
    expect(step3!.params).toMatchObject({ oauth_token: begun.requestToken, oauth_verifier: begun.verifier });
    // Secrets only key the signature: never sent.
    for (const r of fake.requests) {
      expect(JSON.stringify(r)).not.toContain(fake.clientSecret);
      expect(JSON.stringify(r)).not.toContain(begun.requestTokenSecret);
    }
  });

  it('the key handed out, registered in the Zotero test server, answers /keys/current as that user', async () => {
    await fake.close();
    fake = await startZoteroOAuthServer({
      user: { userID: 12, username: 'ada', apiKey: 'P9cT4mWq7ZxR2bLk8NvD3sHy' },
    });
    settings = zoteroOAuthSettings(fake.env())!;
    const zotero = await startZoteroServer();
    try {
      const begun = await approve();
      const done = await zoteroSignIn(settings).complete(
        begun.requestToken,
        begun.requestTokenSecret,
        begun.verifier,
      );
      expect(done).toEqual({ apiKey: 'P9cT4mWq7ZxR2bLk8NvD3sHy', userId: 12, username: 'ada' });
      zotero.addUser({ userID: 12, username: 'ada' });
      zotero.addKey({ key: done.apiKey, userID: 12, access: { user: { library: true, write: true } } });
      const current = await fetch(`${zotero.url}/keys/current`, {
        headers: { 'Zotero-API-Key': done.apiKey },
      });
      expect(current.status).toBe(200);
      expect(await current.json()).toMatchObject({ userID: 12, username: 'ada' });
    } finally {
      await zotero.close();
    }
  });

  it('a person who denies comes back without a verifier, and complete refuses to go on', async () => {
    fake.deny = true;
    const begun = await approve();
    expect(begun.back.searchParams.get('oauth_token')).toBe(begun.requestToken);
    expect(begun.back.searchParams.has('oauth_verifier')).toBe(false);
    const error = await failure(
      zoteroSignIn(settings).complete(begun.requestToken, begun.requestTokenSecret, ''),
    );
    expect(error.code).toBe('validation_error');
    expect(error.message).toBe('The sign-in with Zotero needs a non-empty oauth_verifier.');
    expect(fake.requests.filter((r) => r.path === '/oauth/access')).toHaveLength(0);
  });

  it('a wrong client secret is auth_invalid naming step 1, the secret never shown', async () => {
    secrets.add('WrongSecretAbcdef1234');
    const error = await failure(
      zoteroSignIn({ ...settings, clientSecret: 'WrongSecretAbcdef1234' }).begin(CALLBACK),
    );
    expect(error.code).toBe('auth_invalid');
    expect(error.status).toBe(401);
    expect(error.message).toBe(
      'Zotero refused step 1 of the sign-in (getting a request token): HTTP 401: oauth_problem=signature_invalid.',
    );
    expect(error.hint).toBe(
      'Check ZOTEUS_ZOTERO_OAUTH_KEY and ZOTEUS_ZOTERO_OAUTH_SECRET against the application registered at https://www.zotero.org/oauth/apps.',
    );
    expect(fake.requests[0]?.problem).toBe('signature_invalid');
  });

  it('an unknown client key is auth_invalid at step 1 as well', async () => {
    const error = await failure(zoteroSignIn({ ...settings, clientKey: 'nosuchclient' }).begin(CALLBACK));
    expect(error.code).toBe('auth_invalid');
    expect(error.message).toContain('step 1');
    expect(fake.requests[0]?.problem).toBe('consumer_key_unknown');
  });

  it('a request token used once is refused at step 3, and so is a wrong verifier', async () => {
    const signIn = zoteroSignIn(settings);
    const begun = await approve(signIn);
    const wrong = await failure(
      signIn.complete(begun.requestToken, begun.requestTokenSecret, 'not-the-verifier'),
    );
    expect(wrong.code).toBe('auth_invalid');
    expect(wrong.message).toBe(
      'Zotero refused step 3 of the sign-in (exchanging the verifier for an API key): HTTP 401: oauth_problem=verifier_invalid.',
    );
    expect(wrong.hint).toBe('Start the sign-in again: each sign-in at Zotero can be completed once.');

    await signIn.complete(begun.requestToken, begun.requestTokenSecret, begun.verifier);
    const again = await failure(
      signIn.complete(begun.requestToken, begun.requestTokenSecret, begun.verifier),
    );
    expect(again.code).toBe('auth_invalid');
    expect(again.message).toContain('step 3');
    expect(fake.requests.filter((r) => r.path === '/oauth/access').map((r) => [r.status, r.problem])).toEqual(
      [
        [401, 'verifier_invalid'],
        [200, undefined],
        [401, 'token_used'],
      ],
    );
  });

  it('a wrong request token secret at step 3 fails the signature', async () => {
    const begun = await approve();
    secrets.add('NotTheTokenSecret123');
    const error = await failure(
      zoteroSignIn(settings).complete(begun.requestToken, 'NotTheTokenSecret123', begun.verifier),
    );
    expect(error.code).toBe('auth_invalid');
    expect(fake.requests.at(-1)?.problem).toBe('signature_invalid');
  });

  it('a reused nonce is refused by the fake: auth_invalid at step 1 with a hint about the clock', async () => {
    const signIn = zoteroSignIn(settings, {
      nonce: () => 'same-nonce-every-time',
      now: () => 1_700_000_000_999,
    });
    await signIn.begin(CALLBACK);
    expect(fake.requests[0]?.params).toMatchObject({
      oauth_nonce: 'same-nonce-every-time',
      oauth_timestamp: '1700000000',
    });
    const error = await failure(signIn.begin(CALLBACK));
    expect(error.code).toBe('auth_invalid');
    expect(error.hint).toBe("Check this machine's clock, then start the sign-in again.");
    expect(fake.requests.map((r) => [r.status, r.problem])).toEqual([
      [200, undefined],
      [401, 'nonce_used'],
    ]);
  });

  it('a callback that is not an absolute http(s) URL is refused before any request', async () => {
    const error = await failure(zoteroSignIn(settings).begin('/relative/callback'));
    expect(error.code).toBe('validation_error');
    expect(error.field).toBe('oauth_callback');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('what the fake checks (RFC 5849, as Zotero does)', () => {
  const signed = (extra: Record<string, string>, body?: OAuthParam[]) =>
    signRequest({
      method: 'POST',
      url: `${fake.base}/request`,
      clientKey: fake.clientKey,
      clientSecret: fake.clientSecret,
      extra,
      body,
      timestamp: Math.floor(Date.now() / 1000),
      nonce: `n${Math.random().toString(36).slice(2)}`,
    });
  const post = (params: OAuthParam[], body?: string) =>
    fetch(`${fake.base}/request`, {
      method: 'POST',
      headers: {
        Authorization: authorizationHeader(params),
        ...(body === undefined ? {} : { 'Content-Type': 'application/x-www-form-urlencoded' }),
      },
      body,
    });

  it('takes a correctly signed request and refuses it with one parameter changed after signing', async () => {
    const ok = await post(signed({ oauth_callback: CALLBACK }));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    expect(new URLSearchParams(await ok.text()).get('oauth_callback_confirmed')).toBe('true');

    const tampered = signed({ oauth_callback: CALLBACK }).map(([n, v]): OAuthParam =>
      n === 'oauth_callback' ? [n, 'http://evil.example/steal'] : [n, v],
    );
    const refused = await post(tampered);
    expect(refused.status).toBe(401);
    expect(await refused.text()).toBe('oauth_problem=signature_invalid');
  });

  it('covers the form body: signed parameters in the body pass, a body changed after signing fails', async () => {
    const body: OAuthParam[] = [['note', 'a b&c']];
    const ok = await post(
      signed({ oauth_callback: CALLBACK }, body),
      new URLSearchParams({ note: 'a b&c' }).toString(),
    );
    expect(ok.status).toBe(200);
    const changed = await post(signed({ oauth_callback: CALLBACK }, body), 'note=other');
    expect(changed.status).toBe(401);
    expect(fake.requests.map((r) => r.problem)).toEqual([undefined, 'signature_invalid']);
  });

  it('requires the protocol parameters, oauth_version 1.0 and the callback', async () => {
    const without = signed({ oauth_callback: CALLBACK }).filter(([n]) => n !== 'oauth_nonce');
    const absent = await post(without);
    expect(absent.status).toBe(400);
    expect(await absent.text()).toBe('oauth_problem=parameter_absent&oauth_parameters_absent=oauth_nonce');

    const version = await post(
      signed({ oauth_callback: CALLBACK }).map(([n, v]): OAuthParam =>
        n === 'oauth_version' ? [n, '1.1'] : [n, v],
      ),
    );
    expect(await version.text()).toBe('oauth_problem=version_rejected');

    const noCallback = await post(signed({}));
    expect(noCallback.status).toBe(400);
    expect(await noCallback.text()).toBe(
      'oauth_problem=parameter_absent&oauth_parameters_absent=oauth_callback',
    );
  });

  it('an unknown request token is not authorized', async () => {
    const answer = await fetch(`${fake.base}/authorize?oauth_token=unknown`, { redirect: 'manual' });
    expect(answer.status).toBe(400);
  });
});

describe('failures of the service itself', () => {
  let other: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => (other ? other.close(resolve) : resolve(undefined)));
    other = undefined;
  });

  async function serve(status: number, type: string, body: string): Promise<string> {
    other = createServer((_req, res) => {
      res.writeHead(status, { 'Content-Type': type });
      res.end(body);
    });
    await new Promise<void>((resolve) => other!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(other.address() as AddressInfo).port}/oauth`;
  }

  const at = (base: string): ZoteroOAuthSettings =>
    zoteroOAuthSettings({ ...fake.env(), ZOTEUS_ZOTERO_OAUTH_URL: base })!;

  it('unreachable is network_error naming the step', async () => {
    const base = await serve(200, 'text/plain', '');
    await new Promise((resolve) => other!.close(resolve));
    other = undefined;
    const error = await failure(zoteroSignIn(at(base)).begin(CALLBACK));
    expect(error.code).toBe('network_error');
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(
      `Could not reach Zotero's sign-in service at ${new URL(base).origin} (step 1 of 3, getting a request token): ECONNREFUSED.`,
    );
  });

  it('an HTML page, or a form without the token, is api_error, its body never quoted', async () => {
    const page = await failure(
      zoteroSignIn(at(await serve(200, 'text/html', '<html>Log in</html>'))).begin(CALLBACK),
    );
    expect(page.code).toBe('api_error');
    expect(page.message).toContain('with HTTP 200 and text/html, not the form it answers with');
    await new Promise((resolve) => other!.close(resolve));

    const partial = await failure(
      zoteroSignIn(at(await serve(200, 'application/x-www-form-urlencoded', 'oauth_token=abc'))).begin(
        CALLBACK,
      ),
    );
    expect(partial.code).toBe('api_error');
    expect(partial.message).toBe(
      "Zotero's answer to step 1 of the sign-in (getting a request token) lacks oauth_token_secret.",
    );
  });

  it('an access answer whose key comes back is never quoted when it is malformed', async () => {
    secrets.add('LeakedKeyAbcdefgh12345');
    secrets.add('TokenSecretAbc123');
    const base = await serve(
      200,
      'application/x-www-form-urlencoded',
      'oauth_token_secret=LeakedKeyAbcdefgh12345',
    );
    const error = await failure(zoteroSignIn(at(base)).complete('tok', 'TokenSecretAbc123', 'verifier'));
    expect(error.code).toBe('api_error');
    expect(error.message).toBe(
      "Zotero's answer to step 3 of the sign-in (exchanging the verifier for an API key) lacks a userID.",
    );
  });

  it('a 5xx is a retryable api_error', async () => {
    const error = await failure(zoteroSignIn(at(await serve(503, 'text/plain', 'down'))).begin(CALLBACK));
    expect(error.code).toBe('api_error');
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(
      'Zotero refused step 1 of the sign-in (getting a request token): HTTP 503: down.',
    );
  });
});
