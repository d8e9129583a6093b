/**
 * A shared deployment: the HTTP server with sign-in, serving many people. What it keeps lives
 * in one state database (PostgreSQL at ZOTEUS_DATABASE_URL, for replicas; else an embedded
 * SQLite file, `<data dir>/server.db`, for a single server): OAuth clients, codes and tokens,
 * the tenants and their encrypted Zotero keys, each tenant's idempotency records and write
 * journal. Each request with a valid token runs as its tenant: the tenant's own key and
 * library, its own folder, caches and services, never the server machine's desktop Zotero.
 */
import { join } from 'node:path';
import type { Config } from '../../core/config.js';
import { ZoteusError } from '../../core/errors.js';
import type { Env } from '../../core/paths.js';
import { sqlAuthStore } from '../../core/store/auth-store.js';
import { sqlSessionStore, type SessionStore } from '../../core/store/sessions-sql.js';
import { migrateState, type StateDatabase } from '../../core/store/state.js';
import { SECRET_KEYS_VAR, secretKeysFromEnv } from '../../core/tenants/secrets.js';
import { tenantStore, type Tenant, type TenantStore } from '../../core/tenants/store.js';
import type { Deps } from '../../core/tool.js';
import { zoteroOAuthSettings, zoteroSignIn } from '../../core/zotero/oauth1.js';
import type { AuthServerOptions } from './auth/routes.js';
import type { Principal } from './auth/principal.js';
import type { AuthSettings } from './auth/settings.js';
import { callerFolderName } from './server.js';
import { tenantQuotaBytes } from '../../render/save.js';
import { tenantRuntime } from './tenant-runtime.js';

export interface Deployment {
  /** The authorization server's options (startHttp's `auth`). */
  auth: AuthServerOptions;
  /** The deps a request of this principal runs with, over the catalogue's. */
  tenantDeps(principal: Principal): Promise<Pick<Deps, 'config' | 'services' | 'redact' | 'sharedState'>>;
  /** For `/readyz`: the database answers and has every migration. */
  ready(): Promise<{ ready: boolean; reason?: string }>;
  tenants: TenantStore;
  /** The sessions of the older revisions, for every replica (startHttp's `sessionStore`). */
  sessions: SessionStore;
  close(): Promise<void>;
}

export interface DeploymentOptions {
  env: Env;
  settings: AuthSettings;
  /** The server's configuration; a tenant's is derived from it. */
  base: Pick<Deps, 'config' | 'redact'>;
  state: StateDatabase;
  now?: () => number;
}

/**
 * The configuration a tenant's calls run with: its key and library, its caches, no desktop; its
 * grant's access and toolsets.
 */
export function tenantConfig(
  base: Config,
  tenant: Pick<Tenant, 'id' | 'apiKey'>,
  grant: Pick<Principal, 'readOnly' | 'toolsets'>,
): Config {
  return {
    ...base,
    ...(grant.toolsets !== undefined ? { toolsets: grant.toolsets, toolsetsGrant: true } : {}),
    apiKey: tenant.apiKey,
    libraryType: 'user',
    libraryId: Number(tenant.id),
    // The server machine's Zotero belongs to nobody who signs in.
    local: 'off',
    localApiKey: undefined,
    writes: 'cloud',
    readOnlyGrant: grant.readOnly,
    cacheDir: join(base.cacheDir, 'tenants', callerFolderName(`tenant-${tenant.id}`)),
  };
}

/** ZOTEUS_UPSTREAM_MAX_IN_FLIGHT: requests in flight to the Zotero server from all replicas, all keys. */
function upstreamCap(env: Env): number | undefined {
  const raw = env.ZOTEUS_UPSTREAM_MAX_IN_FLIGHT?.trim();
  if (!raw) return undefined;
  if (!/^\d{1,6}$/.test(raw) || Number(raw) < 1) {
    throw new ZoteusError(
      'validation_error',
      `ZOTEUS_UPSTREAM_MAX_IN_FLIGHT must be a whole number of requests, 1 or more; got '${raw}'.`,
      { field: 'ZOTEUS_UPSTREAM_MAX_IN_FLIGHT', hint: 'Unset it for no cap beyond 4 per Zotero key.' },
    );
  }
  return Number(raw);
}

export async function openDeployment(options: DeploymentOptions): Promise<Deployment> {
  const { env, state } = options;
  const now = options.now ?? Date.now;
  const keys = secretKeysFromEnv(env);
  if (!keys) {
    throw new ZoteusError(
      'validation_error',
      `Sign-in needs ${SECRET_KEYS_VAR}: the keys that encrypt each person's Zotero key at rest.`,
      {
        field: SECRET_KEYS_VAR,
        hint: `Set ${SECRET_KEYS_VAR} to the output of \`openssl rand -base64 32\`.`,
      },
    );
  }
  // ── An external OpenID provider (ZOTEUS_AUTH=oidc): its own deployment, auth/oidc-deployment.ts.
  if (options.settings.mode === 'oidc') {
    const { openOidcDeployment } = await import('./auth/oidc-deployment.js');
    return openOidcDeployment({ ...options, keys, now, upstreamMaxInFlight: upstreamCap(env) });
  }
  // ── The built-in authorization server, signing in with Zotero.
  const oauth = zoteroOAuthSettings(env);
  if (!oauth) {
    throw new ZoteusError(
      'validation_error',
      'Sign-in with Zotero needs the client key and secret of an app registered with Zotero.',
      {
        field: 'ZOTEUS_ZOTERO_OAUTH_KEY',
        hint: 'Register an app at https://www.zotero.org/oauth/apps and set ZOTEUS_ZOTERO_OAUTH_KEY and ZOTEUS_ZOTERO_OAUTH_SECRET.',
      },
    );
  }
  await migrateState(state);
  const tenants = tenantStore(state.db, keys, now);
  const runtime = tenantRuntime(state, tenants, { now, upstreamMaxInFlight: upstreamCap(env) });
  const tenantOf = async (id: string): Promise<Tenant> => {
    const tenant = await runtime.tenantOf(id);
    if (!tenant) {
      throw new ZoteusError('auth_invalid', 'Your Zotero sign-in is no longer kept by this server.', {
        hint: 'Sign in again through your MCP client.',
      });
    }
    return tenant;
  };

  return {
    tenants,
    sessions: sqlSessionStore(state.db),
    auth: {
      settings: options.settings,
      store: sqlAuthStore(state.db),
      signIn: zoteroSignIn(oauth),
      onSignIn: async (signedIn) => {
        await tenants.put({ id: signedIn.tenantId, username: signedIn.username, apiKey: signedIn.apiKey });
        runtime.forget(signedIn.tenantId);
      },
      files: runtime.filesAccess(tenantQuotaBytes(env)),
      now,
    },
    async tenantDeps(principal) {
      const tenant = await tenantOf(principal.tenantId);
      const config = tenantConfig(options.base.config, tenant, principal);
      return {
        config,
        services: runtime.servicesOf(tenant.id),
        redact: options.base.redact.with([tenant.apiKey]),
        sharedState: runtime.sharedStateOf(tenant.id),
      };
    },
    ready: () => runtime.ready(),
    close: () => runtime.close(),
  };
}
