/**
 * What a grant's scopes allow, the same for the built-in authorization server's tokens and an
 * OpenID provider's JWTs: writes with `zotero:write`, the toolsets named by `zotero:toolset:…`.
 */
import { describe, expect, it } from 'vitest';
import { grantedScopes } from '../../../../src/surfaces/mcp/auth/authorize.js';
import { principalOf } from '../../../../src/surfaces/mcp/auth/oidc.js';
import { grantOf } from '../../../../src/surfaces/mcp/auth/principal.js';

describe('a grant', () => {
  it('is read-only without zotero:write, and names its toolsets in a stable order', () => {
    expect(grantOf(['zotero:read', 'zotero:toolset:files', 'zotero:toolset:citations'])).toEqual({
      readOnly: true,
      toolsets: ['citations', 'files'],
    });
    expect(grantOf(['zotero:read', 'zotero:write'])).toEqual({ readOnly: false });
    expect(grantOf(['zotero:read', 'zotero:toolset:all'])).toEqual({ readOnly: true, toolsets: 'all' });
  });

  it("from another issuer, a toolset this server does not know gives the server's own list, never more", () => {
    expect(grantOf(['zotero:write', 'zotero:toolset:everything'])).toEqual({ readOnly: false });
    expect(principalOf({ sub: 'u1', scp: ['zotero:read', 'zotero:toolset:files'] })).toMatchObject({
      tenantId: 'oidc:u1',
      readOnly: true,
      toolsets: ['files'],
    });
  });

  it('asked at the authorization endpoint: access scopes as before, toolset scopes kept, unknown ones named', () => {
    expect(grantedScopes(undefined)).toEqual(['zotero:read', 'zotero:write']);
    expect(grantedScopes('zotero:read')).toEqual(['zotero:read']);
    expect(grantedScopes('zotero:toolset:files')).toEqual([
      'zotero:read',
      'zotero:write',
      'zotero:toolset:files',
    ]);
    expect(grantedScopes('zotero:read zotero:toolset:files zotero:toolset:files')).toEqual([
      'zotero:read',
      'zotero:toolset:files',
    ]);
    expect(grantedScopes('zotero:read zotero:toolset:nope')).toEqual({ unknown: ['zotero:toolset:nope'] });
  });
});
