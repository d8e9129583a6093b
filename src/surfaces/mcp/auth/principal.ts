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
