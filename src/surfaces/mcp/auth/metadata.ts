/**
 * What the server publishes about its authorization, all derived from the public URL:
 *   - Protected Resource Metadata (RFC 9728) at `/.well-known/oauth-protected-resource/mcp`
 *     (the path form the MCP specification asks clients to try first) and at the root form;
 *   - Authorization Server Metadata (RFC 8414) at `/.well-known/oauth-authorization-server`,
 *     issuer = the public URL (no path, so no path is inserted).
 */
import { SUPPORTED_SCOPES } from './settings.js';

export const PRM_PATH = '/.well-known/oauth-protected-resource';
export const AS_METADATA_PATH = '/.well-known/oauth-authorization-server';
export const AUTHORIZE_PATH = '/authorize';
export const TOKEN_PATH = '/token';
export const REGISTER_PATH = '/register';
export const REVOKE_PATH = '/revoke';
/** Where the consent page's choice (full or read-only access) leads, on its way to Zotero. */
export const CONTINUE_PATH = '/oauth/zotero/continue';
/** Where Zotero sends the browser back after the user signed in. */
export const ZOTERO_CALLBACK_PATH = '/oauth/zotero/callback';

export interface AuthUrls {
  issuer: string;
  /** The protected resource: the tokens' audience. */
  resource: string;
  /** The Protected Resource Metadata URL a 401 names. */
  resourceMetadata: string;
  authorize: string;
  token: string;
  register: string;
  revoke: string;
  continueSignIn: string;
  zoteroCallback: string;
}

export function authUrls(publicUrl: string, mcpPath: string): AuthUrls {
  return {
    issuer: publicUrl,
    resource: `${publicUrl}${mcpPath}`,
    resourceMetadata: `${publicUrl}${PRM_PATH}${mcpPath}`,
    authorize: `${publicUrl}${AUTHORIZE_PATH}`,
    token: `${publicUrl}${TOKEN_PATH}`,
    register: `${publicUrl}${REGISTER_PATH}`,
    revoke: `${publicUrl}${REVOKE_PATH}`,
    continueSignIn: `${publicUrl}${CONTINUE_PATH}`,
    zoteroCallback: `${publicUrl}${ZOTERO_CALLBACK_PATH}`,
  };
}

export function protectedResourceMetadata(urls: AuthUrls): Record<string, unknown> {
  return {
    resource: urls.resource,
    authorization_servers: [urls.issuer],
    scopes_supported: [...SUPPORTED_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Zoteus',
  };
}

export function authorizationServerMetadata(urls: AuthUrls): Record<string, unknown> {
  return {
    issuer: urls.issuer,
    authorization_endpoint: urls.authorize,
    token_endpoint: urls.token,
    registration_endpoint: urls.register,
    revocation_endpoint: urls.revoke,
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}
