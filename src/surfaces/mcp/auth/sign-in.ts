/**
 * The Zotero sign-in the authorization server runs for each user (OAuth 1.0a: request token,
 * the user approves at Zotero, access token = the user's API key).
 */
export interface ZoteroSignIn {
  /** Step 1: a request token for this callback; returns where to send the browser and the token's secret to keep. */
  begin(
    callbackUrl: string,
  ): Promise<{ authorizeUrl: string; requestToken: string; requestTokenSecret: string }>;
  /** Step 3: exchange the verifier; returns the user's API key (oauth_token_secret), id and name. */
  complete(
    requestToken: string,
    requestTokenSecret: string,
    verifier: string,
  ): Promise<{ apiKey: string; userId: number; username: string }>;
}
