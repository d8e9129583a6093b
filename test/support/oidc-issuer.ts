/**
 * A loopback OpenID Connect issuer, for the resource server's tests (ZOTEUS_AUTH=oidc): it
 * serves its discovery document (`<issuer>/.well-known/openid-configuration`) and its JWKS
 * (one RSA and one P-256 key, each with its own `kid`), signs access tokens with whatever
 * claims a test chooses (RS256 or ES256, or any header a test forges), can rotate its keys,
 * and counts the requests it answered.
 */
import { generateKeyPairSync, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export type IssuerAlg = 'RS256' | 'ES256';

interface SigningKey {
  kid: string;
  alg: IssuerAlg;
  privateKey: KeyObject;
  jwk: JsonWebKey;
}

export interface TokenOptions {
  alg?: IssuerAlg;
  /** Another `kid` in the header than the signing key's. */
  kid?: string;
  /** Header fields over the default `{ alg, typ, kid }` (e.g. `alg: 'none'`). */
  header?: Record<string, unknown>;
  /** Signed with a key the JWKS does not publish (under the published key's kid). */
  foreignKey?: boolean;
  /** The signature replaced by this (base64url); `''` for an unsigned token. */
  signature?: string;
}

export interface OidcIssuer {
  /** The issuer: `http://127.0.0.1:PORT/realm` (a path, as most providers have). */
  url: string;
  /** What tokens carry by default. */
  audience: string;
  /** Requests answered, by what. */
  requests: { discovery: number; jwks: number };
  /** A signed token: `iss`, `aud`, `sub`, `iat`, `exp` (1 hour) by default, overridden by `claims`. */
  token(claims?: Record<string, unknown>, options?: TokenOptions): string;
  /** New RSA and EC keys, new kids; the JWKS publishes only the new ones from now on. */
  rotate(): void;
  /** Seconds since the epoch, as the tokens' times are counted (default the real clock). */
  nowS: () => number;
  close(): Promise<void>;
}

let generation = 0;

function newKeys(): SigningKey[] {
  generation += 1;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return [
    { kid: `rsa-${generation}`, alg: 'RS256' as const, ...rsa },
    { kid: `ec-${generation}`, alg: 'ES256' as const, ...ec },
  ].map(({ kid, alg, privateKey, publicKey }) => ({
    kid,
    alg,
    privateKey,
    jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' },
  }));
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export async function startOidcIssuer(options: { audience: string }): Promise<OidcIssuer> {
  let keys = newKeys();
  const foreign = newKeys();
  const requests = { discovery: 0, jwks: 0 };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (path === '/realm/.well-known/openid-configuration') {
      requests.discovery += 1;
      return send({
        issuer: issuer.url,
        authorization_endpoint: `${issuer.url}/authorize`,
        token_endpoint: `${issuer.url}/token`,
        jwks_uri: `${issuer.url}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256', 'ES256'],
      });
    }
    if (path === '/realm/jwks') {
      requests.jwks += 1;
      return send({ keys: keys.map((k) => k.jwk) });
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const issuer: OidcIssuer = {
    url: `http://127.0.0.1:${port}/realm`,
    audience: options.audience,
    requests,
    nowS: () => Math.floor(Date.now() / 1000),
    token(claims = {}, opts = {}) {
      const alg = opts.alg ?? 'RS256';
      const published = keys.find((k) => k.alg === alg)!;
      const key = opts.foreignKey ? foreign.find((k) => k.alg === alg)! : published;
      const now = issuer.nowS();
      const header = { alg, typ: 'at+jwt', kid: opts.kid ?? published.kid, ...opts.header };
      const payload = {
        iss: issuer.url,
        aud: issuer.audience,
        sub: 'subject-1',
        iat: now,
        exp: now + 3600,
        scope: 'openid zotero:read zotero:write',
        ...claims,
      };
      const signed = `${b64(header)}.${b64(payload)}`;
      const signature =
        opts.signature ??
        sign(
          'sha256',
          Buffer.from(signed),
          alg === 'ES256' ? { key: key.privateKey, dsaEncoding: 'ieee-p1363' } : key.privateKey,
        ).toString('base64url');
      return `${signed}.${signature}`;
    },
    rotate() {
      keys = newKeys();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return issuer;
}
