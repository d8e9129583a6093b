/**
 * A signed-in world on loopback: the MCP HTTP server with its authorization server, over a
 * real store (SQLite or PostgreSQL), signing people in through the loopback fake of Zotero's
 * OAuth 1.0a endpoints with the real client of core/zotero/oauth1.ts; a clock to move; and a
 * "browser" that follows the redirects a person's browser would (and clicks the consent page).
 */
import { createServer, type Server as NodeServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../../../src/core/config.js';
import { sqlAuthStore, type AuthStore } from '../../../../src/core/store/auth-store.js';
import { CLI_VERSION } from '../../../../src/core/version.js';
import { zoteroOAuthSettings, zoteroSignIn } from '../../../../src/core/zotero/oauth1.js';
import type { Principal, SignedInTenant } from '../../../../src/surfaces/mcp/auth/principal.js';
import { authSettings } from '../../../../src/surfaces/mcp/auth/settings.js';
import { createCatalogue, createServer as createMcpServer } from '../../../../src/surfaces/mcp/server.js';
import { startHttp, type HttpHandle } from '../../../../src/surfaces/mcp/transports.js';
import { tools } from '../../../../src/tools/index.js';
import { startZoteroOAuthServer, type ZoteroOAuthFake } from '../../../support/zotero-oauth-server.js';
import { isolatedEnv } from '../harness.js';
import { openTestDatabase, type DatabaseKind, type TestDatabase } from './databases.js';
import { freePort } from '../../../support/free-port.js';

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

export interface AuthWorld {
  handle: HttpHandle;
  /** `http://127.0.0.1:PORT`: issuer and public URL. */
  base: string;
  /** `<base>/mcp`. */
  resource: string;
  zotero: ZoteroOAuthFake;
  store: AuthStore;
  /** Who signed in (what onSignIn received). */
  signedIn: SignedInTenant[];
  /** The principal of every server instance the factory built. */
  principals: Principal[];
  /** Moves the authorization server's clock. */
  clock: { offsetMs: number };
  log: string[];
  close(): Promise<void>;
}

export interface WorldOptions {
  database?: DatabaseKind;
  /** Share another world's store (two servers, one database). */
  store?: AuthStore;
  zotero?: ZoteroOAuthFake;
  env?: Record<string, string>;
  /** Where to listen (default 127.0.0.1). */
  host?: string;
}

export async function startAuthWorld(options: WorldOptions = {}): Promise<AuthWorld> {
  let database: TestDatabase | undefined;
  let store = options.store;
  if (!store) {
    database = await openTestDatabase(options.database ?? 'sqlite');
    store = sqlAuthStore(database.db);
  }
  const zotero = options.zotero ?? (await startZoteroOAuthServer());
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    ...isolatedEnv(),
    ...zotero.env(),
    ZOTEUS_AUTH: 'zotero',
    ZOTEUS_PUBLIC_URL: base,
    ...options.env,
  };
  const catalogue = createCatalogue({ tools, config: loadConfig(env), env, version: CLI_VERSION });
  const signedIn: SignedInTenant[] = [];
  const principals: Principal[] = [];
  const clock = { offsetMs: 0 };
  const log: string[] = [];
  const handle = await startHttp(
    (context) => {
      if (context.principal) principals.push(context.principal);
      return createMcpServer(catalogue);
    },
    {
      port,
      ...(options.host ? { host: options.host } : {}),
      log: (line) => log.push(line),
      auth: {
        settings: authSettings(env)!,
        store,
        signIn: zoteroSignIn(zoteroOAuthSettings(env)!),
        onSignIn: async (tenant) => void signedIn.push(tenant),
        now: () => Date.now() + clock.offsetMs,
      },
    },
  );
  return {
    handle,
    base,
    resource: `${base}/mcp`,
    zotero,
    store,
    signedIn,
    principals,
    clock,
    log,
    async close() {
      await handle.close();
      if (!options.zotero) await zotero.close();
      await database?.close();
    },
  };
}

const unescapeHtml = (text: string) =>
  text.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!,
  );

/**
 * Follows a person's browser from `start` until it is sent to `stopAt` (the client's redirect
 * URI), clicking `choose` on the consent page; returns that last URL. Throws with the page
 * where it stopped otherwise.
 */
export async function browse(
  start: string,
  options: { stopAt?: string; choose?: 'full access' | 'read-only' } = {},
): Promise<URL> {
  const stopAt = options.stopAt ?? REDIRECT_URI;
  let url = start;
  for (let hop = 0; hop < 10; hop++) {
    if (url.startsWith(stopAt)) return new URL(url);
    const response = await fetch(url, { redirect: 'manual' });
    if (response.status === 302) {
      await response.body?.cancel();
      url = new URL(response.headers.get('location')!, url).href;
      continue;
    }
    const page = await response.text();
    const label = options.choose === 'read-only' ? 'Continue read-only' : 'Continue with full access';
    const link = new RegExp(`href="([^"]+)">${label}<`).exec(page);
    if (response.status === 200 && link) {
      url = new URL(unescapeHtml(link[1]!), url).href;
      continue;
    }
    throw new BrowserStopped(url, response.status, page);
  }
  throw new Error(`Too many redirects from ${start}`);
}

export class BrowserStopped extends Error {
  constructor(
    readonly url: string,
    readonly status: number,
    readonly page: string,
  ) {
    super(`The browser stopped at ${url}: ${status}`);
  }
}

/** A loopback server of Client ID Metadata Documents: `documents[path]` is served as JSON. */
export async function startCimdServer(): Promise<{
  url(path: string): string;
  documents: Record<string, unknown>;
  fetched: string[];
  close(): Promise<void>;
}> {
  const documents: Record<string, unknown> = {};
  const fetched: string[] = [];
  const server: NodeServer = createServer((req, res) => {
    fetched.push(req.url ?? '');
    const doc = documents[req.url ?? ''];
    if (doc === undefined) {
      res.writeHead(404).end();
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(typeof doc === 'string' ? doc : JSON.stringify(doc));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    documents,
    fetched,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
