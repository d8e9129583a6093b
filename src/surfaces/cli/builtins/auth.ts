/**
 * `zot auth local|status|logout`: the key of the desktop app's local API (Zotero 10+), which
 * only a person can give. `local` asks the app for a key under the name "Zoteus" (the app shows
 * a dialog: Allow, Always Allow, Deny) and stores a remembered key in the selected profile of
 * the config file (0600); it refuses on a non-TTY, since an agent must never click for the
 * user. `status` says what is configured and what the desktop answers (probed without the key,
 * which a one-time key could not survive); `logout` forgets the stored key.
 */
import { readConfigFile, type Config } from '../../../core/config.js';
import { ZoteusError } from '../../../core/errors.js';
import { localApiUrl } from '../../../core/local/local-api.js';
import {
  LOCAL_APP_NAME,
  probeLocalWrites,
  SERVER_ID_HEADER,
  type LocalWriteProbe,
} from '../../../core/local/local-writes.js';
import { REDACTED } from '../../../core/redact.js';
import type { CliIO } from '../io.js';
import { canAsk } from '../prompt.js';
import { writeConfigFile } from './config.js';

type Env = Readonly<Record<string, string | undefined>>;

/** How long `zot auth local` waits for the person to answer Zotero's dialog. */
export const AUTHORIZE_WAIT_MS = 5 * 60_000;

const ALWAYS =
  'In Zotero, click "Always Allow": a one-time key ("Allow") is used up by the first request that writes, and most changes take several requests.';

function notWritable(probe: LocalWriteProbe): ZoteusError {
  return new ZoteusError(
    probe.state === 'not_running' ? 'network_error' : 'not_found',
    `The Zotero desktop app cannot give a write key: ${probe.detail}`,
    { ...(probe.hint ? { hint: probe.hint } : {}), retryable: probe.state === 'not_running' },
  );
}

export async function authLocal(
  io: CliIO,
  config: Config,
  env: Env,
  profileName: string,
  noInteraction: boolean,
): Promise<Record<string, unknown>> {
  if (!canAsk(io, noInteraction)) {
    throw new ZoteusError(
      'validation_error',
      '`zot auth local` is for a person at a terminal: it asks the Zotero desktop app for a write key, and a person must allow it there.',
      {
        hint: 'Agents and scripts get the key from the environment: set ZOTEUS_LOCAL_API_KEY (a person prints the stored one with `zot config get local_api_key`).',
      },
    );
  }
  const url = localApiUrl(env);
  const probe = await probeLocalWrites({ url });
  if (probe.state !== 'writable') throw notWritable(probe);
  io.stderr.write(`Asking the Zotero desktop app at ${url} for a key for "${LOCAL_APP_NAME}"…\n${ALWAYS}\n`);
  let response: Response;
  try {
    response = await fetch(`${url}/local/authorize`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'Zotero-API-Version': '3',
        ...(probe.serverId ? { [SERVER_ID_HEADER]: probe.serverId } : {}),
      },
      body: JSON.stringify({ appName: LOCAL_APP_NAME }),
      signal: AbortSignal.timeout(AUTHORIZE_WAIT_MS),
    });
  } catch (error) {
    throw new ZoteusError(
      'network_error',
      `The Zotero desktop app did not answer the authorisation at ${url} (${(error as Error).message}).`,
      { hint: 'Check that Zotero is running, then run `zot auth local` again.' },
    );
  }
  const text = await response.text();
  let body: { key?: unknown; remember?: unknown; denied?: unknown } | undefined;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = undefined;
  }
  if (response.status === 429) {
    const wait = Number(response.headers.get('retry-after')) || 60;
    throw new ZoteusError('rate_limited', 'Zotero was asked for a key too often in the last minute.', {
      retryAfterSeconds: wait,
      hint: `Wait ${wait} seconds, then run \`zot auth local\` again.`,
    });
  }
  if (response.status === 403 && body?.denied === true) {
    throw new ZoteusError('permission_denied', 'Zotero was told not to give Zoteus a key ("Deny").', {
      hint: 'Run `zot auth local` again and click "Always Allow" to let Zoteus write through the desktop app.',
    });
  }
  if (response.status === 403) {
    throw notWritable({
      ...probe,
      state: 'disabled',
      detail: `its local API is disabled (HTTP 403 at ${url}).`,
    });
  }
  if (response.status !== 200 || typeof body?.key !== 'string' || body.key === '') {
    throw new ZoteusError(
      'api_error',
      `The Zotero desktop app answered the authorisation with HTTP ${response.status}.`,
      { hint: 'Restart Zotero and run `zot auth local` again.' },
    );
  }
  if (body.remember !== true) {
    throw new ZoteusError(
      'validation_error',
      'Zotero gave a one-time key ("Allow"): it is used up by the first request that writes, so it was not saved.',
      { hint: 'Run `zot auth local` again and click "Always Allow".' },
    );
  }
  const file = readConfigFile(config.configFile);
  const profile = { ...(file.profiles[profileName] ?? {}), local_api_key: body.key };
  writeConfigFile(config.configFile, { ...file, profiles: { ...file.profiles, [profileName]: profile } });
  io.stderr.write(
    `Saved to profile '${profileName}' in ${config.configFile}. Agents: export ZOTEUS_LOCAL_API_KEY="$(zot config get local_api_key)".\n`,
  );
  return {
    saved: true,
    profile: profileName,
    configFile: config.configFile,
    localApiKey: REDACTED,
    ...(probe.serverId ? { serverId: probe.serverId } : {}),
  };
}

export async function authStatus(config: Config, env: Env): Promise<Record<string, unknown>> {
  const url = localApiUrl(env);
  const probe = config.local === 'off' ? undefined : await probeLocalWrites({ url });
  return {
    localApiKey: config.localApiKey === undefined ? null : REDACTED,
    source: config.localApiKey === undefined ? null : (config.sources.localApiKey ?? 'default'),
    profile: config.profile ?? null,
    writes: config.writes ?? 'auto',
    desktop: probe
      ? { url, state: probe.state, detail: probe.detail, ...(probe.hint ? { hint: probe.hint } : {}) }
      : { url, state: null, detail: 'ZOTEUS_LOCAL=off: the desktop app is not used.' },
  };
}

export function authLogout(config: Config, profileName: string): Record<string, unknown> {
  const file = readConfigFile(config.configFile);
  const current = file.profiles[profileName];
  const had = current?.local_api_key !== undefined;
  if (current && had) {
    const { local_api_key: _dropped, ...rest } = current;
    writeConfigFile(config.configFile, { ...file, profiles: { ...file.profiles, [profileName]: rest } });
  }
  return {
    removed: had,
    profile: profileName,
    configFile: config.configFile,
    // The environment still wins over the profile.
    stillSetBy: config.sources.localApiKey === 'env' ? 'ZOTEUS_LOCAL_API_KEY' : null,
    note: 'Zotero keeps the key until Settings → Advanced → "Clear Write Authorizations".',
  };
}
