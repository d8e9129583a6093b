/**
 * The OAuth store on SQLite and on PostgreSQL, one suite: what a replica decides through it
 * (a code redeemed once, a refresh token rotated once, a sign-in completed once) holds when
 * two requests race, and a reuse revokes the whole family.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  sqlAuthStore,
  UNUSED_CLIENT_MS,
  type AuthorizationCodeRecord,
  type AuthStore,
  type TokenRecord,
} from '../../../../src/core/store/auth-store.js';
import { DATABASES, openTestDatabase, type TestDatabase } from './databases.js';

const opened: TestDatabase[] = [];
afterEach(async () => {
  while (opened.length) await opened.pop()!.close();
});

async function store(kind: (typeof DATABASES)[number]): Promise<AuthStore> {
  const database = await openTestDatabase(kind);
  opened.push(database);
  return sqlAuthStore(database.db);
}

const T0 = 1_800_000_000_000;
const RESOURCE = 'https://zoteus.example.org/mcp';

const code = (over: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord => ({
  codeHash: 'code-1',
  familyId: 'family-1',
  clientId: 'zoteus-client',
  redirectUri: 'http://127.0.0.1:9/cb',
  codeChallenge: 'c'.repeat(43),
  scopes: ['zotero:read', 'zotero:write'],
  resource: RESOURCE,
  tenantId: '475425',
  username: 'z_public',
  expiresAt: T0 + 60_000,
  ...over,
});

const token = (over: Partial<TokenRecord> = {}): TokenRecord => ({
  tokenHash: 'access-1',
  kind: 'access',
  familyId: 'family-1',
  clientId: 'zoteus-client',
  scopes: ['zotero:read'],
  resource: RESOURCE,
  tenantId: '475425',
  username: 'z_public',
  expiresAt: T0 + 3_600_000,
  ...over,
});

describe.each(DATABASES)('the OAuth store on %s', (kind) => {
  it('keeps a registered client, its redirect URIs in order, and replaces it on a second put', async () => {
    const s = await store(kind);
    expect(await s.client('zoteus-x')).toBeUndefined();
    await s.putClient({
      clientId: 'zoteus-x',
      redirectUris: ['https://a.example/cb', 'http://127.0.0.1:3/cb'],
      createdAt: T0,
    });
    expect(await s.client('zoteus-x')).toEqual({
      clientId: 'zoteus-x',
      redirectUris: ['https://a.example/cb', 'http://127.0.0.1:3/cb'],
      createdAt: T0,
    });
    await s.putClient({
      clientId: 'zoteus-x',
      clientName: 'Lab app',
      redirectUris: ['https://b.example/cb'],
      createdAt: T0 + 1,
    });
    expect(await s.client('zoteus-x')).toMatchObject({
      clientName: 'Lab app',
      redirectUris: ['https://b.example/cb'],
    });
  });

  it('hands a pending sign-in to one taker only, narrows its scopes, and forgets it after 10 minutes', async () => {
    const s = await store(kind);
    const pending = {
      requestToken: 'rt-1',
      requestTokenSecret: 'rts-1',
      authorizeUrl: 'https://www.zotero.org/oauth/authorize?oauth_token=rt-1',
      clientId: 'zoteus-client',
      redirectUri: 'http://127.0.0.1:9/cb',
      codeChallenge: 'c'.repeat(43),
      scopes: ['zotero:read', 'zotero:write'],
      resource: RESOURCE,
      state: 'xyz',
      expiresAt: T0 + 600_000,
    };
    await s.putPending(pending);
    await s.putPending({ ...pending, requestToken: 'rt-2', state: undefined });
    expect(await s.pending('rt-1', T0)).toEqual(pending);
    await s.narrowPending('rt-1', ['zotero:read']);
    const taken = await Promise.all([s.takePending('rt-1', T0), s.takePending('rt-1', T0)]);
    expect(taken.filter(Boolean)).toEqual([{ ...pending, scopes: ['zotero:read'] }]);
    expect(await s.pending('rt-1', T0)).toBeUndefined();
    // Kept until its ten minutes are up, then gone.
    expect(await s.pending('rt-2', T0 + 599_999)).toMatchObject({ requestToken: 'rt-2' });
    expect(await s.pending('rt-2', T0 + 600_000)).toBeUndefined();
    expect(await s.takePending('rt-2', T0 + 600_001)).toBeUndefined();
  });

  it('redeems a code once under a race; a second redemption revokes the tokens of its family', async () => {
    const s = await store(kind);
    await s.putCode(code());
    const results = await Promise.all([s.redeemCode('code-1', T0 + 10), s.redeemCode('code-1', T0 + 10)]);
    expect(results.map((r) => r.kind).sort()).toEqual(['redeemed', 'reused']);
    await s.putTokens([
      token(),
      token({ tokenHash: 'refresh-1', kind: 'refresh' }),
      token({ tokenHash: 'other', familyId: 'family-2' }),
    ]);
    expect((await s.redeemCode('code-1', T0 + 20)).kind).toBe('reused');
    expect((await s.token('access-1'))?.revokedAt).toBe(T0 + 20);
    expect((await s.token('refresh-1'))?.revokedAt).toBe(T0 + 20);
    expect((await s.token('other'))?.revokedAt).toBeUndefined();
    expect((await s.redeemCode('nope', T0)).kind).toBe('unknown');
    await s.putCode(code({ codeHash: 'code-2', expiresAt: T0 }));
    expect((await s.redeemCode('code-2', T0 + 1)).kind).toBe('expired');
  });

  it('rotates a refresh token once under a race; presenting it again revokes the family', async () => {
    const s = await store(kind);
    await s.putTokens([token(), token({ tokenHash: 'refresh-1', kind: 'refresh' })]);
    const results = await Promise.all([
      s.rotateRefresh('refresh-1', T0 + 5),
      s.rotateRefresh('refresh-1', T0 + 5),
    ]);
    expect(results.map((r) => r.kind).sort()).toEqual(['reused', 'rotated']);
    expect((await s.token('access-1'))?.revokedAt).toBe(T0 + 5);
    expect((await s.token('refresh-1'))?.rotatedAt).toBe(T0 + 5);
    // The race's winner issues its new tokens after the loser revoked the family: born dead.
    await s.putTokens([
      token({ tokenHash: 'access-new' }),
      token({ tokenHash: 'refresh-new', kind: 'refresh' }),
    ]);
    expect((await s.token('access-new'))?.revokedAt).toBe(T0 + 5);
    expect((await s.rotateRefresh('refresh-new', T0 + 6)).kind).not.toBe('rotated');
    // An access token cannot be rotated; an expired refresh token neither.
    await s.putTokens([
      token({ tokenHash: 'access-2', familyId: 'f3' }),
      token({ tokenHash: 'refresh-2', kind: 'refresh', familyId: 'f3', expiresAt: T0 }),
    ]);
    expect((await s.rotateRefresh('access-2', T0)).kind).toBe('invalid');
    expect((await s.rotateRefresh('refresh-2', T0 + 1)).kind).toBe('invalid');
    expect((await s.token('access-2'))?.revokedAt).toBeUndefined();
  });

  it('revokes an access token alone, a refresh token with its family, and purges what expired', async () => {
    const s = await store(kind);
    await s.putTokens([
      token(),
      token({ tokenHash: 'access-2' }),
      token({ tokenHash: 'refresh-1', kind: 'refresh', expiresAt: T0 + 10_000_000 }),
    ]);
    expect(await s.revokeToken('access-1', T0 + 1)).toBe(true);
    expect((await s.token('access-2'))?.revokedAt).toBeUndefined();
    expect(await s.revokeToken('refresh-1', T0 + 2)).toBe(true);
    expect((await s.token('access-2'))?.revokedAt).toBe(T0 + 2);
    expect((await s.token('access-1'))?.revokedAt).toBe(T0 + 1);
    expect(await s.revokeToken('unknown', T0)).toBe(false);
    await s.purgeExpired(T0 + 3_600_000);
    expect(await s.token('access-1')).toBeUndefined();
    expect(await s.token('refresh-1')).toMatchObject({ kind: 'refresh', scopes: ['zotero:read'] });
  });

  it('forgets a registered client unused for a month, never one with something issued to it', async () => {
    const s = await store(kind);
    const client = (clientId: string) => ({
      clientId,
      clientName: clientId,
      redirectUris: ['https://a.example/cb'],
      createdAt: T0,
    });
    await s.putClient(client('zoteus-unused'));
    await s.putClient(client('zoteus-client'));
    await s.putTokens([token({ expiresAt: T0 + UNUSED_CLIENT_MS * 2 })]);
    await s.purgeExpired(T0 + UNUSED_CLIENT_MS - 1);
    expect(await s.client('zoteus-unused')).toBeDefined();
    await s.purgeExpired(T0 + UNUSED_CLIENT_MS);
    expect(await s.client('zoteus-unused')).toBeUndefined();
    expect(await s.client('zoteus-client')).toMatchObject({ clientId: 'zoteus-client' });
  });
});
