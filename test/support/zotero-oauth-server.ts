/**
 * A loopback fake of Zotero's OAuth 1.0a endpoints (`/oauth/request`, `/oauth/authorize`,
 * `/oauth/access`), checking what `shared/zotero/oauth.md` says a fake must (RFC 5849): the
 * HMAC-SHA1 signature recomputed from what arrived (query, `Authorization: OAuth` header and a
 * form body), the required protocol parameters, `oauth_version` 1.0 when present, nonces and
 * request tokens used once. `GET /oauth/authorize` stands for the person approving (or denying)
 * at Zotero: it redirects to the callback. The signature check is written here again, apart from
 * src/core/zotero/oauth1.ts, so that a mistake there cannot cancel itself out.
 * Test code only: never a product backend.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The person who signs in, and the key Zotero makes for them. */
export interface OAuthFakeUser {
  userID: number;
  username: string;
  /** The API key step 3 hands out (24 letters and digits by default). */
  apiKey: string;
}

export interface OAuthFakeOptions {
  clientKey?: string;
  clientSecret?: string;
  user?: Partial<OAuthFakeUser>;
}

export interface OAuthFakeRequest {
  method: string;
  path: string;
  status: number;
  /** Every parameter received (query, header, form), `oauth_signature` included. */
  params: Record<string, string>;
  /** The Authorization header as received, if any. */
  authorization: string | undefined;
  /** Why it was refused (`oauth_problem`), if it was. */
  problem?: string;
}

export interface ZoteroOAuthFake {
  /** `http://127.0.0.1:PORT/oauth`: the base of ZOTEUS_ZOTERO_OAUTH_URL. */
  base: string;
  clientKey: string;
  clientSecret: string;
  /** Who approves the next authorizations (change it between sign-ins). */
  user: OAuthFakeUser;
  /** When true, the person denies at Zotero: the redirect carries no verifier. */
  deny: boolean;
  requests: OAuthFakeRequest[];
  /** The query of every `GET /oauth/authorize` (the pre-filled options included). */
  authorizations: Array<Record<string, string>>;
  /** The environment that points Zoteus at this fake. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

interface RequestToken {
  secret: string;
  callback: string;
  verifier?: string;
  user?: OAuthFakeUser;
  used: boolean;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function alnum(n: number): string {
  return [...randomBytes(n)].map((b) => ALNUM[b % ALNUM.length]).join('');
}

/** RFC 5849 §3.6, written out byte by byte. */
function enc(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** RFC 5849 §3.5.1: `OAuth realm="…", name="value", …`; realm is not a parameter. */
function headerParams(header: string | undefined): Array<[string, string]> | 'malformed' | undefined {
  if (header === undefined) return undefined;
  const found = /^OAuth\s+(.*)$/is.exec(header.trim());
  if (!found) return undefined;
  const out: Array<[string, string]> = [];
  for (const part of found[1]!.split(',')) {
    const pair = /^\s*([^=\s]+)\s*=\s*"([^"]*)"\s*$/.exec(part);
    if (!pair) return 'malformed';
    const name = decodeURIComponent(pair[1]!);
    if (name === 'realm') continue;
    out.push([name, decodeURIComponent(pair[2]!)]);
  }
  return out;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly problem: string,
    readonly extra = '',
  ) {
    super(problem);
  }
}

export async function startZoteroOAuthServer(options: OAuthFakeOptions = {}): Promise<ZoteroOAuthFake> {
  const clientKey = options.clientKey ?? 'b1e8c4d2a9f0e3c7a5d6';
  const clientSecret = options.clientSecret ?? '3f9a0c1e7b2d8f4a6c5e';
  const tokens = new Map<string, RequestToken>();
  const nonces = new Set<string>();

  const fake: ZoteroOAuthFake = {
    base: '',
    clientKey,
    clientSecret,
    user: {
      userID: options.user?.userID ?? 475_425,
      username: options.user?.username ?? 'z_public',
      apiKey: options.user?.apiKey ?? alnum(24),
    },
    deny: false,
    requests: [],
    authorizations: [],
    env: () => ({
      ZOTEUS_ZOTERO_OAUTH_KEY: clientKey,
      ZOTEUS_ZOTERO_OAUTH_SECRET: clientSecret,
      ZOTEUS_ZOTERO_OAUTH_URL: fake.base,
    }),
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };

  /** The request's parameters, its signature checked; throws a Refusal. */
  function verify(
    req: IncomingMessage,
    url: URL,
    body: string,
    record: OAuthFakeRequest,
  ): Map<string, string> {
    const all: Array<[string, string]> = [...url.searchParams];
    const fromHeader = headerParams(record.authorization);
    if (fromHeader === 'malformed') throw new Refusal(400, 'parameter_rejected');
    all.push(...(fromHeader ?? []));
    if (/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '')) {
      all.push(...new URLSearchParams(body));
    }
    for (const [n, v] of all) record.params[n] = v;
    const protocol = new Map<string, string>();
    for (const [n, v] of all) {
      if (!n.startsWith('oauth_')) continue;
      if (protocol.has(n)) throw new Refusal(400, 'parameter_rejected', `&oauth_parameters_rejected=${n}`);
      protocol.set(n, v);
    }
    const absent = [
      'oauth_consumer_key',
      'oauth_signature_method',
      'oauth_timestamp',
      'oauth_nonce',
      'oauth_signature',
    ].filter((n) => !protocol.has(n));
    if (absent.length > 0)
      throw new Refusal(400, 'parameter_absent', `&oauth_parameters_absent=${absent.join('%26')}`);
    if (protocol.has('oauth_version') && protocol.get('oauth_version') !== '1.0')
      throw new Refusal(400, 'version_rejected');
    if (protocol.get('oauth_signature_method') !== 'HMAC-SHA1')
      throw new Refusal(400, 'signature_method_rejected');
    if (!/^\d+$/.test(protocol.get('oauth_timestamp')!)) throw new Refusal(400, 'timestamp_refused');
    if (protocol.get('oauth_consumer_key') !== clientKey) throw new Refusal(401, 'consumer_key_unknown');

    const token = protocol.get('oauth_token');
    const tokenSecret = token === undefined ? '' : (tokens.get(token)?.secret ?? '');
    const pairs = all
      .filter(([n]) => n !== 'oauth_signature')
      .map(([n, v]) => [enc(n), enc(v)] as const)
      .sort(([an, av], [bn, bv]) => (an === bn ? (av < bv ? -1 : av > bv ? 1 : 0) : an < bn ? -1 : 1));
    const uri = `http://${(req.headers.host ?? '').toLowerCase()}${url.pathname}`;
    const base = `${req.method!.toUpperCase()}&${enc(uri)}&${enc(pairs.map(([n, v]) => `${n}=${v}`).join('&'))}`;
    const expected = createHmac('sha1', `${enc(clientSecret)}&${enc(tokenSecret)}`)
      .update(base)
      .digest('base64');
    if (expected !== protocol.get('oauth_signature')) throw new Refusal(401, 'signature_invalid');

    const nonce = protocol.get('oauth_nonce')!;
    if (nonces.has(nonce)) throw new Refusal(401, 'nonce_used');
    nonces.add(nonce);
    return protocol;
  }

  function answerForm(res: ServerResponse, record: OAuthFakeRequest, fields: Record<string, string>): void {
    record.status = 200;
    res.writeHead(200, { 'Content-Type': 'application/x-www-form-urlencoded' });
    res.end(new URLSearchParams(fields).toString());
  }

  function requestToken(res: ServerResponse, record: OAuthFakeRequest, protocol: Map<string, string>): void {
    const callback = protocol.get('oauth_callback');
    if (callback === undefined)
      throw new Refusal(400, 'parameter_absent', '&oauth_parameters_absent=oauth_callback');
    const token = alnum(20);
    const secret = alnum(20);
    tokens.set(token, { secret, callback, used: false });
    answerForm(res, record, {
      oauth_token: token,
      oauth_token_secret: secret,
      oauth_callback_confirmed: 'true',
    });
  }

  function authorize(res: ServerResponse, record: OAuthFakeRequest, url: URL): void {
    const query = Object.fromEntries(url.searchParams);
    fake.authorizations.push(query);
    record.params = query;
    const token = query['oauth_token'];
    const entry = token === undefined ? undefined : tokens.get(token);
    if (token === undefined || entry === undefined || entry.used) {
      record.status = 400;
      record.problem = 'token_rejected';
      res.writeHead(400, { 'Content-Type': 'text/html' });
      res.end('<html><body>Invalid or expired request token.</body></html>');
      return;
    }
    const target = new URL(entry.callback);
    target.searchParams.set('oauth_token', token);
    if (!fake.deny) {
      entry.verifier = alnum(20);
      entry.user = { ...fake.user };
      target.searchParams.set('oauth_verifier', entry.verifier);
    }
    record.status = 302;
    res.writeHead(302, { Location: target.toString() });
    res.end();
  }

  function accessToken(res: ServerResponse, record: OAuthFakeRequest, protocol: Map<string, string>): void {
    const token = protocol.get('oauth_token');
    const verifier = protocol.get('oauth_verifier');
    if (token === undefined)
      throw new Refusal(400, 'parameter_absent', '&oauth_parameters_absent=oauth_token');
    if (verifier === undefined)
      throw new Refusal(400, 'parameter_absent', '&oauth_parameters_absent=oauth_verifier');
    const entry = tokens.get(token);
    if (entry === undefined) throw new Refusal(401, 'token_rejected');
    if (entry.used) throw new Refusal(401, 'token_used');
    if (entry.verifier === undefined || entry.verifier !== verifier || entry.user === undefined) {
      throw new Refusal(401, 'verifier_invalid');
    }
    entry.used = true;
    const user = entry.user;
    answerForm(res, record, {
      oauth_token: user.apiKey,
      oauth_token_secret: user.apiKey,
      userID: String(user.userID),
      username: user.username,
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const record: OAuthFakeRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      status: 0,
      params: {},
      authorization: req.headers.authorization,
    };
    fake.requests.push(record);
    try {
      if (url.pathname === '/oauth/authorize' && req.method === 'GET') return authorize(res, record, url);
      const step = url.pathname === '/oauth/request' ? 1 : url.pathname === '/oauth/access' ? 3 : 0;
      if (step === 0 || req.method !== 'POST') {
        record.status = 404;
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end('Not found');
        return;
      }
      const protocol = verify(req, url, body, record);
      if (step === 1) requestToken(res, record, protocol);
      else accessToken(res, record, protocol);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      record.status = error.status;
      record.problem = error.problem;
      res.writeHead(error.status, { 'Content-Type': 'application/x-www-form-urlencoded' });
      res.end(`oauth_problem=${error.problem}${error.extra}`);
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth`;
  return fake;
}
