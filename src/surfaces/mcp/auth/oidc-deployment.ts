/**
 * A shared deployment whose people sign in with an external OpenID provider (ZOTEUS_AUTH=oidc,
 * oidc.ts): the state database and the encryption of keys are deployment.ts's; each tenant
 * (`oidc:<sub>`) supplies its Zotero key once through the account routes (account.ts), checked
 * with Zotero's `GET /keys/current`, and its calls then reach that key's own user library. A
 * tenant with no key yet is served, and every call that needs Zotero answers `auth_missing`
 * saying where to post the key (Config.apiKeyHint).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { createServiceRegistry } from '../../../core/deps.js';
import { migrationStatus } from '../../../core/store/migrations.js';
import { sqlSessionStore } from '../../../core/store/sessions-sql.js';
import { migrateState, STATE_MIGRATIONS } from '../../../core/store/state.js';
import type { SecretKeys } from '../../../core/tenants/secrets.js';
import { tenantStore, type Tenant } from '../../../core/tenants/store.js';
import type { ServiceRegistry } from '../../../core/tool.js';
import { createZoteroClient } from '../../../core/zotero/client.js';
import { tenantConfig, type Deployment, type DeploymentOptions } from '../deployment.js';
import { SETTINGS_PATH, ZOTERO_KEY_PATH } from './account.js';

const TENANT_CACHE_MS = 60_000;
const MAX_OPEN_TENANTS = 200;

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
  const known = new Map<string, { tenant: Tenant; at: number }>();
  const open = new Map<string, ServiceRegistry>();
  const base = options.base.config;
  // Who holds this process's share of the Zotero keys' in-flight bounds (shared-limits.ts).
  const replica = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const sharedStateOf = (id: string) => ({
    db: state.db,
    owner: `tenant:${id}`,
    replica,
    upstreamMaxInFlight: options.upstreamMaxInFlight,
  });

  const servicesOf = (id: string): ServiceRegistry => {
    let services = open.get(id);
    if (services) {
      open.delete(id);
    } else {
      services = createServiceRegistry();
      if (open.size >= MAX_OPEN_TENANTS) {
        const [oldest, closing] = open.entries().next().value as [string, ServiceRegistry];
        open.delete(oldest);
        void closing.close();
      }
    }
    open.set(id, services);
    return services;
  };

  const tenantOf = async (id: string): Promise<Tenant | undefined> => {
    const cached = known.get(id);
    if (cached && now() - cached.at < TENANT_CACHE_MS) return cached.tenant;
    const tenant = await tenants.get(id);
    // No key yet is never kept: one posted through another replica serves the next request.
    if (tenant) known.set(id, { tenant, at: now() });
    else known.delete(id);
    return tenant;
  };

  const forget = (id: string) => {
    known.delete(id);
    // The key changed: the next call opens a fresh Zotero client and caches.
    const services = open.get(id);
    open.delete(id);
    void services?.close();
  };

  return {
    tenants,
    sessions: sqlSessionStore(state.db),
    auth: {
      settings,
      oidc,
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
            ...tenantConfig(base, { id, apiKey: '' }, principal.readOnly),
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
        config: { ...tenantConfig(base, tenant, principal.readOnly), libraryId: tenant.userId },
        services: servicesOf(tenant.id),
        redact: options.base.redact.with([tenant.apiKey]),
        sharedState: sharedStateOf(tenant.id),
      };
    },
    async ready() {
      try {
        const status = await migrationStatus(state.db, STATE_MIGRATIONS);
        return status.pending.length === 0
          ? { ready: true }
          : { ready: false, reason: `migrations pending: ${status.pending.join(', ')}` };
      } catch {
        return { ready: false, reason: 'the state database does not answer' };
      }
    },
    async close() {
      for (const services of open.values()) await services.close();
      open.clear();
      await state.db.close();
    },
  };
}
