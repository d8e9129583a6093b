import { parseToolsets, type ToolsetChoice } from '../../../core/toolsets.js';
import { SCOPE_TOOLSET_PREFIX, SCOPE_WRITE } from './settings.js';

/**
 * Who a request to `/mcp` comes from once its bearer token checked out, and what the sign-in
 * hands on. The tenant is the Zotero user; a grant without `zotero:write` is read-only.
 */

export interface Principal {
  /** The Zotero user id, as a string. */
  tenantId: string;
  username: string;
  scopes: string[];
  /** No `zotero:write` in the grant: mutating tools are refused (by the caller of the factory). */
  readOnly: boolean;
  /** The toolsets the grant names (`zotero:toolset:<name>`); undefined: the server's own. */
  toolsets?: ToolsetChoice | undefined;
  /** The OAuth client the token was issued to. */
  clientId: string;
}

/** A user who just signed in through Zotero: the lead's `onSignIn` stores the key (encrypted). */
export interface SignedInTenant {
  tenantId: string;
  userId: number;
  username: string;
  /** The user's Zotero API key: handed on once, never stored nor logged by the authorization server. */
  apiKey: string;
}

/** What a grant's scopes allow: writes with `zotero:write`; the toolsets named, if any. */
export function grantOf(scopes: readonly string[]): Pick<Principal, 'readOnly' | 'toolsets'> {
  const named = scopes
    .filter((s) => s.startsWith(SCOPE_TOOLSET_PREFIX))
    .map((s) => s.slice(SCOPE_TOOLSET_PREFIX.length))
    .sort();
  let toolsets: ToolsetChoice | undefined;
  try {
    toolsets = named.length > 0 ? parseToolsets('scope', named.join(',')) : undefined;
  } catch {
    // A token of another issuer naming no toolset we know: the server's own list, never more.
    toolsets = undefined;
  }
  return { readOnly: !scopes.includes(SCOPE_WRITE), ...(toolsets ? { toolsets } : {}) };
}
