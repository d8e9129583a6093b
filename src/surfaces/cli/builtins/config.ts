/**
 * `zot config init|get|show`. `init` is for humans at a terminal and refuses elsewhere;
 * `get` prints one raw value for shell profiles (the one place a key is printed, because
 * it was asked for by name); `show` prints the effective configuration, key redacted.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  checkApiKey,
  ENV_VARS,
  parseApiUrl,
  readConfigFile,
  type Config,
  type ConfigFile,
  type Profile,
  type Source,
} from '../../../core/config.js';
import { ZoteusError } from '../../../core/errors.js';
import { REDACTED } from '../../../core/redact.js';
import type { CliIO } from '../io.js';
import { canAsk, createPrompter } from '../prompt.js';

export type ConfigName =
  'library_id' | 'library_type' | 'api_url' | 'api_key' | 'local_api_key' | 'zotero_data_dir' | 'data_dir';

export function configValue(config: Config, name: ConfigName): string | undefined {
  switch (name) {
    case 'library_id':
      return config.libraryId === undefined ? undefined : String(config.libraryId);
    case 'library_type':
      return config.libraryType;
    case 'api_url':
      return config.apiUrl;
    case 'api_key':
      return config.apiKey;
    case 'local_api_key':
      return config.localApiKey;
    case 'zotero_data_dir':
      return config.zoteroDataDir;
    case 'data_dir':
      return config.dataDir;
  }
}

export function showConfig(config: Config): Record<string, unknown> {
  return {
    profile: config.profile ?? null,
    configFile: config.configFile,
    library: { id: config.libraryId ?? null, type: config.libraryType },
    apiUrl: config.apiUrl,
    apiKey: config.apiKey === undefined ? null : REDACTED,
    cacheDir: config.cacheDir,
    dataDir: config.dataDir,
    zoteroDataDir: config.zoteroDataDir,
    local: config.local,
    localApiKey: config.localApiKey === undefined ? null : REDACTED,
    writes: config.writes ?? 'auto',
    readOnly: config.readOnly,
    confirmBulkWrites: config.confirmBulkWrites,
    allowDelete: config.allowDelete,
    indexFulltext: config.indexFulltext,
    indexAutoMinItems: config.indexAutoMinItems,
    embeddings: config.embeddings,
    embeddingsUrl: config.embeddingsUrl ?? null,
    embeddingsModel: config.embeddingsModel ?? null,
    embeddingsApiKey: config.embeddingsApiKey === undefined ? null : REDACTED,
    embeddingsBatch: config.embeddingsBatch,
    maxCollections: config.maxCollections,
    retryBudgetMs: config.retryBudgetMs,
    timeoutMs: config.timeoutMs,
    resolvers: config.resolvers,
    citations: config.citations,
    sources: config.sources,
  };
}

export function writeConfigFile(path: string, file: ConfigFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600); // an existing file keeps its old mode otherwise
}

/** How many answers to one question are refused before the wizard gives up. */
export const MAX_ATTEMPTS = 3;

/** One question of the wizard: its default and where that came from, and how an answer is checked. */
interface Question {
  label: string;
  /** The value Enter keeps: the current profile's, or the environment's when it overrides it. */
  fallback: string | undefined;
  /** Where the fallback came from: only `env` and `profile` values are written when Enter keeps them. */
  from: Source | undefined;
  secret?: boolean;
  /** The environment variable that sets this instead, for the hint when the wizard gives up. */
  envVar: string;
  /** The answer, normalised; throws a validation_error that says what was wrong. */
  check(answer: string): string;
}

type Ask = (question: Question) => Promise<{ value: string | undefined; typed: boolean }>;

/**
 * Asks for each setting on a TTY; refuses on a non-TTY, naming the variables to set instead.
 * `effective` is the configuration in force (environment over the profile): its values are the
 * defaults shown in brackets.
 */
export async function initConfig(
  io: CliIO,
  path: string,
  profileName: string,
  noInteraction: boolean,
  effective?: Config,
): Promise<Record<string, unknown>> {
  if (!canAsk(io, noInteraction)) {
    const vars = ENV_VARS.filter((v) => v.name.startsWith('ZOTERO_')).map((v) => v.name);
    throw new ZoteusError('validation_error', '`zot config init` is interactive and needs a terminal.', {
      hint: `Agents and scripts set environment variables instead: ${vars.join(', ')}.`,
    });
  }
  const file = readConfigFile(path);
  const current: Profile = file.profiles[profileName] ?? {};
  const prompter = createPrompter(io);
  const ask: Ask = async (q) => {
    const shown =
      q.fallback === undefined
        ? ''
        : ` [${q.secret ? MASK : q.fallback}${q.from === 'env' ? ', from the environment' : ''}]`;
    for (let attempt = 1; ; attempt += 1) {
      const answer = (await prompter.ask(`${q.label}${shown}: `, q.secret ?? false)).trim();
      if (answer === '') return { value: q.fallback, typed: false };
      try {
        return { value: q.check(answer), typed: true };
      } catch (error) {
        if (!(error instanceof ZoteusError) || error.code !== 'validation_error') throw error;
        if (attempt >= MAX_ATTEMPTS) {
          throw new ZoteusError(
            'validation_error',
            `${error.message} That was the ${ordinal(MAX_ATTEMPTS)} answer refused; nothing was saved.`,
            {
              hint: `Run \`zot config init\` again, or set ${q.envVar} in the environment instead.`,
            },
          );
        }
        io.stderr.write(
          `${error.message} Try again, or press Enter ${q.fallback === undefined ? 'to leave it unset' : 'to keep the value in brackets'}.\n`,
        );
      }
    }
  };
  try {
    io.stderr.write(`Profile '${profileName}' in ${path}. Enter keeps the value in brackets.\n`);
    const result = await dialogue(ask, current, effective, file, path, profileName);
    io.stderr.write(`Saved to ${path}. Try: zot whoami\n`);
    return result;
  } finally {
    prompter.close();
  }
}

/** A set secret, as a default is shown: never any of its characters. */
const MASK = '********';

function ordinal(n: number): string {
  return ['first', 'second', 'third', 'fourth', 'fifth'][n - 1] ?? `${n}th`;
}

/** The default of a setting: the effective configuration's when given, else the profile's. */
function fallbackOf(
  effective: Config | undefined,
  key: string,
  value: string | number | undefined,
  fromProfile: string | number | undefined,
): { fallback: string | undefined; from: Source | undefined } {
  if (effective === undefined)
    return fromProfile === undefined || fromProfile === ''
      ? { fallback: undefined, from: undefined }
      : { fallback: String(fromProfile), from: 'profile' };
  if (value === undefined) return { fallback: undefined, from: undefined };
  return { fallback: String(value), from: effective.sources[key] ?? 'default' };
}

async function dialogue(
  ask: Ask,
  current: Profile,
  effective: Config | undefined,
  file: ConfigFile,
  path: string,
  profileName: string,
): Promise<Record<string, unknown>> {
  // Settings the wizard does not ask about (data_dir) stay as they were.
  const profile: Profile = { ...current };
  /** The answer goes into the profile when typed, or when Enter kept a value of the environment or the profile. */
  const keep = (answer: { value: string | undefined; typed: boolean }, from: Source | undefined) =>
    answer.value !== undefined && (answer.typed || from === 'env' || from === 'profile')
      ? answer.value
      : undefined;

  const id = fallbackOf(effective, 'libraryId', effective?.libraryId, current.library_id);
  const libraryId = keep(
    await ask({
      label: 'Library id (your userID, or a group id)',
      ...id,
      envVar: 'ZOTERO_LIBRARY_ID',
      check: (answer) => {
        if (!/^\d+$/.test(answer) || Number(answer) < 1 || !Number.isSafeInteger(Number(answer)))
          throw new ZoteusError(
            'validation_error',
            `The library id must be a whole number, your userID or a group's id (https://www.zotero.org/settings/keys shows your userID); got '${answer.slice(0, 40)}'.`,
          );
        return String(Number(answer));
      },
    }),
    id.from,
  );
  if (libraryId !== undefined) profile.library_id = libraryId;
  else delete profile.library_id;

  const type = fallbackOf(effective, 'libraryType', effective?.libraryType, current.library_type ?? 'user');
  const libraryType = keep(
    await ask({
      label: 'Library type (user or group)',
      ...type,
      envVar: 'ZOTERO_LIBRARY_TYPE',
      check: (answer) => {
        const t = answer.toLowerCase();
        if (t !== 'user' && t !== 'group')
          throw new ZoteusError(
            'validation_error',
            `The library type must be user or group; got '${answer.slice(0, 40)}'.`,
          );
        if (t === 'group' && libraryId === undefined)
          throw new ZoteusError(
            'validation_error',
            'A group library needs its id, and no library id was given: answer user, or start again with the group id.',
          );
        return t;
      },
    }),
    type.from,
  );
  profile.library_type = libraryType === 'group' ? 'group' : 'user';

  const url = fallbackOf(effective, 'apiUrl', effective?.apiUrl, current.api_url ?? 'https://api.zotero.org');
  const apiUrl = keep(
    await ask({
      label: 'Web API URL',
      ...url,
      envVar: 'ZOTERO_API_URL',
      check: (answer) => parseApiUrl('The Web API URL', answer),
    }),
    url.from,
  );
  if (apiUrl !== undefined) profile.api_url = apiUrl;
  else delete profile.api_url;

  const key = fallbackOf(effective, 'apiKey', effective?.apiKey, current.api_key);
  const apiKey = keep(
    await ask({
      label: 'API key (https://www.zotero.org/settings/keys)',
      ...key,
      secret: true,
      envVar: 'ZOTERO_API_KEY',
      check: (answer) => {
        // The same rule as a key from the environment: any printable key a server may issue.
        checkApiKey('api_key', answer);
        return answer;
      },
    }),
    key.from,
  );
  if (apiKey !== undefined) profile.api_key = apiKey;
  else delete profile.api_key;

  const dir = fallbackOf(effective, 'zoteroDataDir', effective?.zoteroDataDir, current.zotero_data_dir);
  const dataDir = keep(
    await ask({
      label: 'Zotero data directory',
      ...dir,
      envVar: 'ZOTERO_DATA_DIR',
      check: (answer) => answer,
    }),
    dir.from,
  );
  if (dataDir !== undefined) profile.zotero_data_dir = dataDir;
  else delete profile.zotero_data_dir;

  file.profiles[profileName] = profile;
  file.default_profile ??= profileName;
  writeConfigFile(path, file);
  return { configFile: path, profile: profileName, apiKey: profile.api_key ? REDACTED : null };
}
