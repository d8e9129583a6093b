/**
 * The state of the MCP HTTP server's OAuth 2.1 authorization server: registered clients (RFC
 * 7591), sign-ins waiting for Zotero (keyed by Zotero's request token, 10 minutes), codes (single
 * use, 60 s) and tokens (access and refresh, each stored as the SHA-256 of its value, never the
 * value). One interface; one implementation over the async SQL client, so SQLite on one machine
 * and PostgreSQL behind replicas hold the same rows (portable SQL: `?` placeholders, TEXT and
 * BIGINT columns, `ON CONFLICT`, no JSON functions, no AUTOINCREMENT).
 *
 * Every decision that two replicas could race on is one conditional UPDATE or DELETE whose
 * changed-row count says who won: a code is redeemed once, a refresh token rotates once, a
 * pending sign-in completes once. A code or a refresh token presented again after it was used
 * revokes its whole family (every token issued from the same authorization).
 */
import type { SqlClient } from './sql.js';

export interface OAuthClientRecord {
  clientId: string;
  clientName?: string | undefined;
  redirectUris: string[];
  createdAt: number;
}

/** An authorization waiting for the user to come back from Zotero. */
export interface PendingAuthorization {
  /** Zotero's OAuth 1.0a request token: the key the callback finds this by. */
  requestToken: string;
  requestTokenSecret: string;
  /** Where the browser goes to sign in at Zotero. */
  authorizeUrl: string;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  scopes: string[];
  resource: string;
  state?: string | undefined;
  expiresAt: number;
}

export interface AuthorizationCodeRecord {
  codeHash: string;
  /** The family of every token issued from this authorization. */
  familyId: string;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  scopes: string[];
  resource: string;
  tenantId: string;
  username: string;
  expiresAt: number;
}

export type TokenKind = 'access' | 'refresh';

export interface TokenRecord {
  tokenHash: string;
  kind: TokenKind;
  familyId: string;
  clientId: string;
  scopes: string[];
  /** The audience: the resource (RFC 8707) the token was issued for. */
  resource: string;
  tenantId: string;
  username: string;
  expiresAt: number;
  revokedAt?: number | undefined;
  /** A refresh token exchanged for a new one: dead, and its reuse is a theft signal. */
  rotatedAt?: number | undefined;
}

export type RedeemResult =
  | { kind: 'redeemed'; code: AuthorizationCodeRecord }
  /** Redeemed before: its family has been revoked. */
  | { kind: 'reused'; code: AuthorizationCodeRecord }
  | { kind: 'expired' }
  | { kind: 'unknown' };

export type RotateResult =
  | { kind: 'rotated'; token: TokenRecord }
  /** Rotated before: its family has been revoked. */
  | { kind: 'reused'; token: TokenRecord }
  | { kind: 'invalid' };

export interface AuthStore {
  putClient(client: OAuthClientRecord): Promise<void>;
  client(clientId: string): Promise<OAuthClientRecord | undefined>;
  putPending(pending: PendingAuthorization): Promise<void>;
  /** The pending authorization, unless it expired (it stays: the callback takes it). */
  pending(requestToken: string, now: number): Promise<PendingAuthorization | undefined>;
  /** Narrows a pending authorization's scopes (the user chose a read-only grant). */
  narrowPending(requestToken: string, scopes: readonly string[]): Promise<void>;
  /** Removes and returns the pending authorization; one caller only gets it. */
  takePending(requestToken: string, now: number): Promise<PendingAuthorization | undefined>;
  putCode(code: AuthorizationCodeRecord): Promise<void>;
  /** Marks the code used; a second redemption revokes the tokens of its family. */
  redeemCode(codeHash: string, now: number): Promise<RedeemResult>;
  putTokens(tokens: readonly TokenRecord[]): Promise<void>;
  token(tokenHash: string): Promise<TokenRecord | undefined>;
  /** Retires a live refresh token; one that was rotated before revokes its family. */
  rotateRefresh(tokenHash: string, now: number): Promise<RotateResult>;
  revokeFamily(familyId: string, now: number): Promise<number>;
  /** Revokes one token (a refresh token: its whole family, RFC 7009 §2.1). False: no such token. */
  revokeToken(tokenHash: string, now: number): Promise<boolean>;
  /** Drops what expired before `now` (pending sign-ins, codes, tokens). */
  purgeExpired(now: number): Promise<void>;
}

/** The tables, for the migration runner (each statement idempotent). */
/** How long a registered client with nothing issued to it is kept. */
export const UNUSED_CLIENT_MS = 30 * 24 * 60 * 60 * 1000;

export const authMigrations: string[] = [
  `CREATE TABLE IF NOT EXISTS auth_clients (
    client_id TEXT PRIMARY KEY,
    client_name TEXT,
    redirect_uris TEXT NOT NULL,
    created_at BIGINT NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS auth_pending (
    request_token TEXT PRIMARY KEY,
    request_token_secret TEXT NOT NULL,
    authorize_url TEXT NOT NULL,
    client_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    scopes TEXT NOT NULL,
    resource TEXT NOT NULL,
    state TEXT,
    expires_at BIGINT NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS auth_codes (
    code_hash TEXT PRIMARY KEY,
    family_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    scopes TEXT NOT NULL,
    resource TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    username TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
  )`,
  `CREATE TABLE IF NOT EXISTS auth_tokens (
    token_hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    family_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    scopes TEXT NOT NULL,
    resource TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    username TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT,
    rotated_at BIGINT
  )`,
  // A revoked family stays revoked for tokens issued after the revocation (a race's winner).
  `CREATE TABLE IF NOT EXISTS auth_revoked_families (
    family_id TEXT PRIMARY KEY,
    revoked_at BIGINT NOT NULL
  )`,
  'CREATE INDEX IF NOT EXISTS auth_tokens_family ON auth_tokens (family_id)',
  'CREATE INDEX IF NOT EXISTS auth_tokens_expiry ON auth_tokens (expires_at)',
];

/** Scopes are stored space-separated, as OAuth writes them. */
const joinScopes = (scopes: readonly string[]) => scopes.join(' ');
const splitScopes = (text: string) => text.split(' ').filter((scope) => scope !== '');
/** PostgreSQL answers BIGINT as a string. */
const int = (value: unknown): number => Number(value);
const optionalInt = (value: unknown): number | undefined =>
  value === null || value === undefined ? undefined : Number(value);

interface ClientRow {
  client_id: string;
  client_name: string | null;
  redirect_uris: string;
  created_at: unknown;
}
interface PendingRow {
  request_token: string;
  request_token_secret: string;
  authorize_url: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  scopes: string;
  resource: string;
  state: string | null;
  expires_at: unknown;
}
interface CodeRow {
  code_hash: string;
  family_id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  scopes: string;
  resource: string;
  tenant_id: string;
  username: string;
  expires_at: unknown;
  used_at: unknown;
}
interface TokenRow {
  token_hash: string;
  kind: string;
  family_id: string;
  client_id: string;
  scopes: string;
  resource: string;
  tenant_id: string;
  username: string;
  expires_at: unknown;
  revoked_at: unknown;
  rotated_at: unknown;
  family_revoked_at: unknown;
}

function pendingFrom(row: PendingRow): PendingAuthorization {
  return {
    requestToken: row.request_token,
    requestTokenSecret: row.request_token_secret,
    authorizeUrl: row.authorize_url,
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    codeChallenge: row.code_challenge,
    scopes: splitScopes(row.scopes),
    resource: row.resource,
    ...(row.state !== null ? { state: row.state } : {}),
    expiresAt: int(row.expires_at),
  };
}

function codeFrom(row: CodeRow): AuthorizationCodeRecord {
  return {
    codeHash: row.code_hash,
    familyId: row.family_id,
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    codeChallenge: row.code_challenge,
    scopes: splitScopes(row.scopes),
    resource: row.resource,
    tenantId: row.tenant_id,
    username: row.username,
    expiresAt: int(row.expires_at),
  };
}

function tokenFrom(row: TokenRow): TokenRecord {
  const revokedAt = optionalInt(row.revoked_at) ?? optionalInt(row.family_revoked_at);
  const rotatedAt = optionalInt(row.rotated_at);
  return {
    tokenHash: row.token_hash,
    kind: row.kind === 'refresh' ? 'refresh' : 'access',
    familyId: row.family_id,
    clientId: row.client_id,
    scopes: splitScopes(row.scopes),
    resource: row.resource,
    tenantId: row.tenant_id,
    username: row.username,
    expiresAt: int(row.expires_at),
    ...(revokedAt !== undefined ? { revokedAt } : {}),
    ...(rotatedAt !== undefined ? { rotatedAt } : {}),
  };
}

const TOKEN_COLUMNS =
  'token_hash, kind, family_id, client_id, scopes, resource, tenant_id, username, expires_at, revoked_at, rotated_at';
const TOKEN_SELECT = `SELECT ${TOKEN_COLUMNS.split(', ')
  .map((column) => `t.${column}`)
  .join(', ')}, f.revoked_at AS family_revoked_at
  FROM auth_tokens t LEFT JOIN auth_revoked_families f ON f.family_id = t.family_id`;

/** The store over a SQL client whose database has `authMigrations` applied. */
export function sqlAuthStore(db: SqlClient): AuthStore {
  const revokeFamily = async (familyId: string, now: number): Promise<number> => {
    await db.run(
      'INSERT INTO auth_revoked_families (family_id, revoked_at) VALUES (?, ?) ON CONFLICT (family_id) DO NOTHING',
      [familyId, now],
    );
    const { changes } = await db.run(
      'UPDATE auth_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL',
      [now, familyId],
    );
    return changes;
  };
  const token = async (tokenHash: string): Promise<TokenRecord | undefined> => {
    const rows = await db.query<TokenRow>(`${TOKEN_SELECT} WHERE t.token_hash = ?`, [tokenHash]);
    return rows[0] ? tokenFrom(rows[0]) : undefined;
  };

  return {
    async putClient(client) {
      await db.run(
        `INSERT INTO auth_clients (client_id, client_name, redirect_uris, created_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (client_id) DO UPDATE SET client_name = excluded.client_name, redirect_uris = excluded.redirect_uris`,
        [client.clientId, client.clientName ?? null, JSON.stringify(client.redirectUris), client.createdAt],
      );
    },

    async client(clientId) {
      const rows = await db.query<ClientRow>(
        'SELECT client_id, client_name, redirect_uris, created_at FROM auth_clients WHERE client_id = ?',
        [clientId],
      );
      const row = rows[0];
      if (!row) return undefined;
      const uris = JSON.parse(row.redirect_uris) as unknown;
      return {
        clientId: row.client_id,
        ...(row.client_name !== null ? { clientName: row.client_name } : {}),
        redirectUris: Array.isArray(uris) ? uris.filter((uri): uri is string => typeof uri === 'string') : [],
        createdAt: int(row.created_at),
      };
    },

    async putPending(pending) {
      await db.run(
        `INSERT INTO auth_pending (request_token, request_token_secret, authorize_url, client_id, redirect_uri,
           code_challenge, scopes, resource, state, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          pending.requestToken,
          pending.requestTokenSecret,
          pending.authorizeUrl,
          pending.clientId,
          pending.redirectUri,
          pending.codeChallenge,
          joinScopes(pending.scopes),
          pending.resource,
          pending.state ?? null,
          pending.expiresAt,
        ],
      );
    },

    async pending(requestToken, now) {
      const rows = await db.query<PendingRow>(
        'SELECT * FROM auth_pending WHERE request_token = ? AND expires_at > ?',
        [requestToken, now],
      );
      return rows[0] ? pendingFrom(rows[0]) : undefined;
    },

    async narrowPending(requestToken, scopes) {
      await db.run('UPDATE auth_pending SET scopes = ? WHERE request_token = ?', [
        joinScopes(scopes),
        requestToken,
      ]);
    },

    async takePending(requestToken, now) {
      const rows = await db.query<PendingRow>('SELECT * FROM auth_pending WHERE request_token = ?', [
        requestToken,
      ]);
      const row = rows[0];
      if (!row) return undefined;
      const { changes } = await db.run('DELETE FROM auth_pending WHERE request_token = ?', [requestToken]);
      // Another request took it between the two statements: it is theirs.
      if (changes !== 1) return undefined;
      const pending = pendingFrom(row);
      return pending.expiresAt > now ? pending : undefined;
    },

    async putCode(code) {
      await db.run(
        `INSERT INTO auth_codes (code_hash, family_id, client_id, redirect_uri, code_challenge, scopes, resource,
           tenant_id, username, expires_at, used_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
        [
          code.codeHash,
          code.familyId,
          code.clientId,
          code.redirectUri,
          code.codeChallenge,
          joinScopes(code.scopes),
          code.resource,
          code.tenantId,
          code.username,
          code.expiresAt,
        ],
      );
    },

    async redeemCode(codeHash, now) {
      const rows = await db.query<CodeRow>('SELECT * FROM auth_codes WHERE code_hash = ?', [codeHash]);
      const row = rows[0];
      if (!row) return { kind: 'unknown' };
      const code = codeFrom(row);
      const { changes } = await db.run(
        'UPDATE auth_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL',
        [now, codeHash],
      );
      if (changes !== 1) {
        await revokeFamily(code.familyId, now);
        return { kind: 'reused', code };
      }
      return code.expiresAt > now ? { kind: 'redeemed', code } : { kind: 'expired' };
    },

    async putTokens(tokens) {
      await db.transaction(async (tx) => {
        for (const t of tokens) {
          await tx.run(
            `INSERT INTO auth_tokens (${TOKEN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)`,
            [
              t.tokenHash,
              t.kind,
              t.familyId,
              t.clientId,
              joinScopes(t.scopes),
              t.resource,
              t.tenantId,
              t.username,
              t.expiresAt,
            ],
          );
        }
      });
    },

    token,

    async rotateRefresh(tokenHash, now) {
      const { changes } = await db.run(
        `UPDATE auth_tokens SET rotated_at = ?
         WHERE token_hash = ? AND kind = 'refresh' AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > ?
           AND family_id NOT IN (SELECT family_id FROM auth_revoked_families)`,
        [now, tokenHash, now],
      );
      const found = await token(tokenHash);
      if (!found || found.kind !== 'refresh') return { kind: 'invalid' };
      if (changes === 1) return { kind: 'rotated', token: found };
      if (found.rotatedAt !== undefined) {
        await revokeFamily(found.familyId, now);
        return { kind: 'reused', token: found };
      }
      return { kind: 'invalid' };
    },

    revokeFamily,

    async revokeToken(tokenHash, now) {
      const found = await token(tokenHash);
      if (!found) return false;
      if (found.kind === 'refresh') await revokeFamily(found.familyId, now);
      else
        await db.run('UPDATE auth_tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL', [
          now,
          tokenHash,
        ]);
      return true;
    },

    async purgeExpired(now) {
      await db.run('DELETE FROM auth_pending WHERE expires_at <= ?', [now]);
      await db.run('DELETE FROM auth_codes WHERE expires_at <= ?', [now]);
      await db.run('DELETE FROM auth_tokens WHERE expires_at <= ?', [now]);
      await db.run(
        `DELETE FROM auth_revoked_families
         WHERE family_id NOT IN (SELECT family_id FROM auth_tokens) AND family_id NOT IN (SELECT family_id FROM auth_codes)`,
      );
      // Anyone may register a client: one unused for a month (no code, sign-in or token) goes,
      // so registrations cannot pile up. A client that comes back registers again.
      await db.run(
        `DELETE FROM auth_clients WHERE created_at <= ?
           AND client_id NOT IN (SELECT client_id FROM auth_tokens)
           AND client_id NOT IN (SELECT client_id FROM auth_codes)
           AND client_id NOT IN (SELECT client_id FROM auth_pending)`,
        [now - UNUSED_CLIENT_MS],
      );
    },
  };
}
