/**
 * A shared deployment whose people sign in with an external OpenID provider (ZOTEUS_AUTH=oidc,
 * oidc.ts): the state database and the encryption of keys are deployment.ts's; each tenant
 * (`oidc:<sub>`) supplies its Zotero key once through the account routes (account.ts), checked
 * with Zotero's `GET /keys/current`, and its calls then reach that key's own user library. A
 * tenant with no key yet is served, and every call that needs Zotero answers `auth_missing`
 * saying where to post the key (Config.apiKeyHint).
 */
import { sqlSessionStore } from '../../../core/store/sessions-sql.js';
import { migrateState } from '../../../core/store/state.js';
import type { SecretKeys } from '../../../core/tenants/secrets.js';
import { tenantStore } from '../../../core/tenants/store.js';
import { createZoteroClient } from '../../../core/zotero/client.js';
import { tenantConfig, type Deployment, type DeploymentOptions } from '../deployment.js';
import { tenantQuotaBytes } from '../../../render/save.js';
import { tenantRuntime } from '../tenant-runtime.js';
import { SETTINGS_PATH, ZOTERO_KEY_PATH } from './account.js';

/** What a tenant without a key is told (auth_missing's hint): where to post it. */
export function keyHint(publicUrl: string): string {
  return `This server has no Zotero API key of yours yet: POST it once to ${publicUrl}${ZOTERO_KEY_PATH} with your access token (Authorization: Bearer) and {"key": "…"}, or use the page at ${publicUrl}${SETTINGS_PATH}; then reconnect if your client keeps a session. Create a key at https://www.zotero.org/settings/keys.`;
}

export async function openOidcDeployment(
  options: DeploymentOptions & {
    keys: SecretKeys;
    now: () => number;
    /** ZOTEUS_UPSTREAM_MAX_IN_FLIGHT, as deployment.ts reads it. */
    upstreamMaxInFlight: number | undefined;
  },
): Promise<Deployment> {
  const { state, now, settings } = options;
  const oidc = settings.oidc;
  if (!oidc) throw new Error('openOidcDeployment needs the OpenID provider settings');
  await migrateState(state);
  const tenants = tenantStore(state.db, options.keys, now);
  const base = options.base.config;
  const runtime = tenantRuntime(state, tenants, { now, upstreamMaxInFlight: options.upstreamMaxInFlight });
  const { servicesOf, sharedStateOf } = runtime;
  const tenantOf = (id: string) => runtime.tenantOf(id);
  const forget = (id: string) => runtime.forget(id);

  return {
    tenants,
    sessions: sqlSessionStore(state.db),
    auth: {
      settings,
      oidc,
      files: runtime.filesAccess(tenantQuotaBytes(options.env)),
      now,
      account: {
        tenants,
        onChange: forget,
        async checkKey(key) {
          const client = createZoteroClient({
            apiUrl: base.apiUrl,
            apiKey: key,
            retryBudgetMs: base.retryBudgetMs,
            timeoutMs: base.timeoutMs,
            redact: options.base.redact.with([key]),
          });
          const info = await client.getKeyInfo();
          return { userId: info.userID, username: info.username };
        },
      },
    },
    async tenantDeps(principal) {
      const tenant = await tenantOf(principal.tenantId);
      if (!tenant || tenant.userId === undefined) {
        // Served all the same (tools that need no key work); what needs Zotero says where to post the key.
        const id = principal.tenantId;
        return {
          config: {
            ...tenantConfig(base, { id, apiKey: '' }, principal),
            apiKey: undefined,
            libraryId: undefined,
            apiKeyHint: keyHint(settings.publicUrl),
          },
          services: servicesOf(id),
          redact: options.base.redact,
          sharedState: sharedStateOf(id),
        };
      }
      return {
        config: { ...tenantConfig(base, tenant, principal), libraryId: tenant.userId },
        services: servicesOf(tenant.id),
        redact: options.base.redact.with([tenant.apiKey]),
        sharedState: sharedStateOf(tenant.id),
      };
    },
    ready: () => runtime.ready(),
    close: () => runtime.close(),
  };
}
