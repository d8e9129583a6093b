/**
 * What the authorization server's endpoints share: the options its caller gives (settings,
 * store, the Zotero sign-in, what to do with a signed-in user's key), the clock and the URLs.
 */
import type { FilesAccess } from './files.js';
import type { AuthStore } from '../../../core/store/auth-store.js';
import { type AuthUrls } from './metadata.js';
import type { SignedInTenant } from './principal.js';
import type { AuthSettings } from './settings.js';
import type { ZoteroSignIn } from '../../../core/zotero/oauth1.js';

export interface AuthServerOptions {
  settings: AuthSettings;
  store: AuthStore;
  /** Zotero's OAuth 1.0a handshake (core/zotero/oauth1.ts). */
  signIn: ZoteroSignIn;
  /** Called once per sign-in with the user's Zotero key, before the code is issued; a throw fails the sign-in. */
  onSignIn: (tenant: SignedInTenant) => Promise<void>;
  /** Each person's saved files (files.ts): `/account/files`. */
  files?: FilesAccess | undefined;
  /** For tests: the clock of expiries. */
  now?: () => number;
}

export interface AuthContext {
  settings: AuthSettings;
  store: AuthStore;
  signIn: ZoteroSignIn;
  onSignIn: (tenant: SignedInTenant) => Promise<void>;
  now: () => number;
  urls: AuthUrls;
  /** Client ID Metadata Documents over plain http to loopback: only when the server is on loopback itself. */
  allowLoopbackHttp: boolean;
  log: (line: string) => void;
}
