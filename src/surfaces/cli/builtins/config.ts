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
} from '../../../core/config.js';
import { ZoteusError } from '../../../core/errors.js';
import { REDACTED } from '../../../core/redact.js';
import type { CliIO } from '../io.js';
import { canAsk, createPrompter } from '../prompt.js';

export type ConfigName =
  'library_id' | 'library_type' | 'api_url' | 'api_key' | 'zotero_data_dir' | 'data_dir';

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
    sources: config.sources,
  };
}

export function writeConfigFile(path: string, file: ConfigFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600); // an existing file keeps its old mode otherwise
}

/** Asks for each setting on a TTY; refuses on a non-TTY, naming the variables to set instead. */
export async function initConfig(
  io: CliIO,
  path: string,
  profileName: string,
  noInteraction: boolean,
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
  const question = async (label: string, fallback: string | undefined, secret = false) => {
    const answer = (await prompter.ask(`${label}${fallback ? ` [${fallback}]` : ''}: `, secret)).trim();
    return answer || fallback || undefined;
  };
  try {
    return await dialogue(question, current, file, path, profileName);
  } finally {
    prompter.close();
  }
}

async function dialogue(
  question: (label: string, fallback: string | undefined, secret?: boolean) => Promise<string | undefined>,
  current: Profile,
  file: ConfigFile,
  path: string,
  profileName: string,
): Promise<Record<string, unknown>> {
  const profile: Profile = {};
  const libraryId = await question('Library id (your userID, or a group id)', current.library_id?.toString());
  if (libraryId !== undefined) {
    if (!/^\d+$/.test(libraryId))
      throw new ZoteusError('validation_error', 'The library id must be a number.');
    profile.library_id = libraryId;
  }
  const type = await question('Library type (user or group)', current.library_type ?? 'user');
  if (type !== 'user' && type !== 'group')
    throw new ZoteusError('validation_error', 'The library type must be user or group.');
  profile.library_type = type;
  const apiUrl = await question('Web API URL', current.api_url ?? 'https://api.zotero.org');
  if (apiUrl) profile.api_url = parseApiUrl('api_url', apiUrl);
  const key = await question(
    'API key (https://www.zotero.org/settings/keys; empty keeps the current one)',
    undefined,
    true,
  );
  const apiKey = key ?? current.api_key;
  if (apiKey !== undefined) {
    // The same rule as a key from the environment: any printable key a server may issue.
    checkApiKey('api_key', apiKey);
    profile.api_key = apiKey;
  }
  const dataDir = await question('Zotero data directory', current.zotero_data_dir);
  if (dataDir) profile.zotero_data_dir = dataDir;
  file.profiles[profileName] = profile;
  file.default_profile ??= profileName;
  writeConfigFile(path, file);
  return { configFile: path, profile: profileName, apiKey: profile.api_key ? REDACTED : null };
}
