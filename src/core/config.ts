/**
 * The one place that reads configuration: environment variables, then the selected
 * profile of the config file, then defaults. Every unusable value is a startup error
 * naming the variable, so a typo never silently falls back to a default.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ZoteusError } from './errors.js';
import { TOOLSETS, parseToolsets, type ToolsetChoice } from './toolsets.js';
import { MIN_SECRET_RUN } from './redact.js';
import {
  defaultZoteroDataDir,
  platformCacheDir,
  platformConfigDir,
  platformDataDir,
  type Env,
} from './paths.js';
import { onlyOn } from './call/refs.js';

export type LibraryType = 'user' | 'group';
export type Source = 'env' | 'profile' | 'default';

export interface Config {
  apiKey: string | undefined;
  libraryId: number | undefined;
  libraryType: LibraryType;
  apiUrl: string;
  format: 'json' | 'table' | undefined;
  profile: string | undefined;
  configFile: string;
  cacheDir: string;
  /** Whether bin/zot keeps a V8 code cache in `$cacheDir/v8` (ZOTEUS_COMPILE_CACHE). */
  compileCache: 'on' | 'off';
  dataDir: string;
  zoteroDataDir: string;
  local: 'auto' | 'on' | 'off';
  /**
   * The desktop's local API write key (Zotero 10+): ZOTEUS_LOCAL_API_KEY, else the profile's
   * `local_api_key` (stored by `zot auth local`). Optional so configs built by hand stay valid.
   */
  localApiKey?: string | undefined;
  /** Where writes go (ZOTEUS_WRITES): `auto` (the desktop when it can take them, else the Web API), `desktop`, `cloud`. */
  writes?: 'auto' | 'desktop' | 'cloud';
  indexFulltext: boolean;
  /** The first search of a zotero.sqlite library this large starts building its index in the background (0: never). */
  indexAutoMinItems: number;
  embeddings: 'off' | 'openai' | 'ollama';
  /**
   * Embeddings server base URL and model (no trailing slash). Filled with the provider's
   * defaults when embeddings are on; undefined when they are off and the variable is unset.
   */
  embeddingsUrl: string | undefined;
  embeddingsModel: string | undefined;
  /**
   * Bearer key of an OpenAI-compatible server (ZOTEUS_EMBEDDINGS_API_KEY, else OPENAI_API_KEY).
   * Kept whatever the provider so the surfaces can redact it; only the openai provider sends it.
   */
  embeddingsApiKey: string | undefined;
  /** Texts per embeddings request. */
  embeddingsBatch: number;
  readOnly: boolean;
  /**
   * On a shared deployment, why writes are refused when the server allows them: the caller
   * signed in with a read-only grant. Optional so configs built by hand stay valid.
   */
  readOnlyGrant?: boolean;
  /**
   * On a shared deployment whose people supply their own Zotero key: how to, as auth_missing's
   * hint while a caller has none. Optional so configs built by hand stay valid.
   */
  apiKeyHint?: string;
  /**
   * Which tools an MCP server lists (ZOTEUS_TOOLSETS, toolsets.ts): `default` when unset.
   * Optional so configs built by hand (tests) serve every tool.
   */
  toolsets?: ToolsetChoice;
  /** On a shared deployment: the toolsets are those the caller's sign-in asked for (its grant). */
  toolsetsGrant?: boolean;
  confirmBulkWrites: number;
  allowDelete: boolean;
  maxCollections: number;
  retryBudgetMs: number;
  timeoutMs: number;
  noColor: boolean;
  /** Metadata resolvers of `zot add` (base URLs without a trailing slash). */
  resolvers: {
    crossref: string;
    datacite: string;
    arxiv: string;
    mailto: string | undefined;
    /** Open Library (ISBNs), and the Library of Congress's SRU catalogue when it has nothing. */
    openlibrary: string;
    loc: string;
  };
  /**
   * Metadata services of the checks (core/metadata/): OpenAlex and Semantic Scholar base URLs
   * (no trailing slash) and their optional keys, kept out of `resolvers` (which `zot config show`
   * prints) because they are secrets.
   */
  metadata: {
    openalex: string;
    openalexKey: string | undefined;
    semanticScholar: string;
    semanticScholarKey: string | undefined;
  };
  /**
   * Citations: the default style (an id or a .csl path, ZOTEUS_CITATION_STYLE), and where styles
   * and locales not available offline are downloaded from (base URLs without a trailing slash).
   */
  citations: { style: string; stylesUrl: string; localesUrl: string };
  /**
   * Open-access PDFs of `attach --oa` (base URLs without a trailing slash): Unpaywall needs an
   * e-mail address (OpenAlex, the second source, is `metadata`'s, skipped without its key); the
   * download cap.
   */
  openAccess: {
    unpaywallUrl: string;
    unpaywallEmail: string | undefined;
    maxBytes: number;
  };
  /** Where each setting came from, for `zot config show`. */
  sources: Record<string, Source>;
}

/** A profile as stored in the config file (snake_case, like the file a human edits). */
export interface Profile {
  library_id?: string | number;
  library_type?: LibraryType;
  api_url?: string;
  api_key?: string;
  /** The desktop's local API write key (`zot auth local`). */
  local_api_key?: string;
  zotero_data_dir?: string;
  data_dir?: string;
}

export interface ConfigFile {
  default_profile?: string;
  profiles: Record<string, Profile>;
}

/** The official CSL locales (github.com/citation-style-language/locales), one file per locale. */
export const CSL_LOCALES_URL = 'https://raw.githubusercontent.com/citation-style-language/locales/master';

/** Every variable Zoteus reads, with its default as documented in the README. */
export const ENV_VARS = [
  {
    name: 'ZOTERO_API_KEY',
    alias: 'ZOT_API_KEY',
    default: '(none)',
    help: 'Zotero Web API key; needed for cloud writes.',
  },
  {
    name: 'ZOTERO_LIBRARY_ID',
    alias: 'ZOT_LIBRARY_ID',
    default: "(the key's own user library)",
    help: 'Default library id.',
  },
  { name: 'ZOTERO_LIBRARY_TYPE', default: 'user', help: 'Type of ZOTERO_LIBRARY_ID: user or group.' },
  {
    name: 'ZOTERO_API_URL',
    default: 'https://api.zotero.org',
    help: 'Web API base URL (any compatible server).',
  },
  { name: 'ZOTERO_DATA_DIR', default: '~/Zotero', help: "The Zotero desktop app's data directory." },
  {
    name: 'ZOT_FORMAT',
    default: '(json when stdout is not a TTY, else table)',
    help: 'CLI output format: json or table.',
  },
  { name: 'ZOT_PROFILE', default: 'default', help: 'Profile of the config file to use.' },
  { name: 'ZOT_CONFIG_DIR', default: '(platform config dir)/zoteus', help: 'Where config.json lives.' },
  { name: 'ZOT_CACHE_DIR', default: '(platform cache dir)/zoteus', help: 'Idempotency store and caches.' },
  {
    name: 'ZOTEUS_COMPILE_CACHE',
    default: 'on',
    help: 'off: the CLI keeps no V8 code cache ($ZOT_CACHE_DIR/v8), and starts slower.',
  },
  {
    name: 'ZOTEUS_DATA_DIR',
    default: '(platform data dir)/zoteus',
    help: "Zoteus' own data (indexes, saved files on a shared deployment).",
  },
  { name: 'ZOTEUS_LOCAL', default: 'auto', help: 'Use the desktop app data: auto, on or off.' },
  {
    name: 'ZOTEUS_LOCAL_API_URL',
    default: 'http://127.0.0.1:23119/api',
    help: "The desktop app's local API.",
  },
  {
    name: 'ZOTEUS_LOCAL_API_KEY',
    default: "(the profile's local_api_key)",
    help: "Write key of the desktop app's local API (Zotero 10+); overrides the profile's.",
  },
  {
    name: 'ZOTEUS_WRITES',
    default: 'auto',
    help: 'Where writes go: auto (the desktop app when it can take them, else the Web API), desktop or cloud.',
  },
  {
    name: 'ZOTEUS_READ_ONLY',
    default: 'false',
    help: 'Expose and accept only tools that leave the library unchanged (reads, and those that only write local files).',
  },
  {
    name: 'ZOTEUS_TOOLSETS',
    default: 'default',
    help: `Which tools an MCP server lists: a comma-separated list of default, all, ${TOOLSETS.join(', ')}.`,
  },
  {
    name: 'ZOTEUS_CONFIRM_BULK_WRITES',
    default: '0 (off)',
    help: 'Removing more than N items at once needs confirm: true.',
  },
  { name: 'ZOTEUS_ALLOW_DELETE', default: 'false', help: 'Allow permanent item deletion.' },
  { name: 'ZOTEUS_INDEX_FULLTEXT', default: 'false', help: 'Index full text in the local search index.' },
  {
    name: 'ZOTEUS_INDEX_AUTO_MIN_ITEMS',
    default: '2000',
    help: 'A search of a zotero.sqlite library with this many items builds its index in the background (0: never).',
  },
  { name: 'ZOTEUS_EMBEDDINGS', default: 'off', help: 'Vector ranking: off, openai or ollama.' },
  {
    name: 'ZOTEUS_EMBEDDINGS_URL',
    default: 'https://api.openai.com/v1 (openai), http://127.0.0.1:11434 (ollama)',
    help: 'Embeddings server: an OpenAI-compatible API or an Ollama server.',
  },
  {
    name: 'ZOTEUS_EMBEDDINGS_MODEL',
    default: 'text-embedding-3-small (openai), nomic-embed-text (ollama)',
    help: 'Embedding model.',
  },
  {
    name: 'ZOTEUS_EMBEDDINGS_API_KEY',
    alias: 'OPENAI_API_KEY',
    default: '(none)',
    help: 'Bearer key of the OpenAI-compatible embeddings server (openai only).',
  },
  { name: 'ZOTEUS_EMBEDDINGS_BATCH', default: '64', help: 'Texts per embeddings request.' },
  { name: 'ZOTEUS_MAX_COLLECTIONS', default: '100000', help: 'Cap on the collections one listing reads.' },
  {
    name: 'ZOTEUS_RETRY_BUDGET_MS',
    default: '60000',
    help: 'Total time one call may spend waiting out rate limits.',
  },
  { name: 'ZOTEUS_TIMEOUT_MS', default: '30000', help: 'Timeout of one HTTP request.' },
  {
    name: 'ZOTEUS_CROSSREF_URL',
    default: 'https://api.crossref.org',
    help: 'Crossref REST API (DOI metadata).',
  },
  {
    name: 'ZOTEUS_DATACITE_URL',
    default: 'https://api.datacite.org',
    help: 'DataCite REST API (DOIs Crossref does not know).',
  },
  { name: 'ZOTEUS_ARXIV_URL', default: 'https://export.arxiv.org/api', help: 'arXiv API (arXiv ids).' },
  { name: 'ZOTEUS_CROSSREF_MAILTO', default: '(none)', help: "E-mail address for Crossref's polite pool." },
  {
    name: 'ZOTEUS_OPENLIBRARY_URL',
    default: 'https://openlibrary.org',
    help: 'Open Library (ISBNs: its books API).',
  },
  {
    name: 'ZOTEUS_LOC_URL',
    default: 'http://lx2.loc.gov:210/lcdb',
    help: 'Library of Congress catalogue, SRU (ISBNs Open Library does not know).',
  },
  {
    name: 'ZOTEUS_OPENALEX_URL',
    default: 'https://api.openalex.org',
    help: 'OpenAlex API (works by DOI: retractions, published versions, open-access PDFs).',
  },
  {
    name: 'ZOTEUS_OPENALEX_API_KEY',
    default: '(none)',
    help: 'OpenAlex API key; without one OpenAlex is not asked (the result says so).',
  },
  {
    name: 'ZOTEUS_SEMANTIC_SCHOLAR_URL',
    default: 'https://api.semanticscholar.org/graph/v1',
    help: 'Semantic Scholar Graph API.',
  },
  {
    name: 'ZOTEUS_SEMANTIC_SCHOLAR_API_KEY',
    default: '(none)',
    help: 'Semantic Scholar API key (x-api-key); optional.',
  },
  {
    name: 'ZOTEUS_CITATION_STYLE',
    default: 'apa',
    help: 'Default citation style: a style id (chicago-author-date, ieee…) or a .csl file.',
  },
  {
    name: 'ZOTEUS_STYLES_URL',
    default: 'https://www.zotero.org/styles',
    help: 'Where CSL styles not available offline are downloaded from (once, then cached).',
  },
  {
    name: 'ZOTEUS_LOCALES_URL',
    default: CSL_LOCALES_URL,
    help: 'Where CSL locales (locales-xx-XX.xml) not available offline are downloaded from.',
  },
  {
    name: 'ZOTEUS_UNPAYWALL_EMAIL',
    default: '(none)',
    help: 'E-mail address Unpaywall asks for; needed to look up open-access PDFs there.',
  },
  {
    name: 'ZOTEUS_UNPAYWALL_URL',
    default: 'https://api.unpaywall.org',
    help: 'Unpaywall API (open-access PDFs).',
  },
  { name: 'ZOTEUS_OA_MAX_MB', default: '100', help: 'Largest open-access PDF downloaded, in MB.' },
  { name: 'NO_COLOR', default: '(unset)', help: 'Any value turns colour off.' },
] as const;

/** Longest Zotero key accepted: zotero.org's are 24 characters, other servers' may be longer. */
const API_KEY_MAX = 256;
/** Longest embeddings key accepted: bearer tokens (JWTs) run to a few thousand characters. */
const EMBEDDINGS_KEY_MAX = 4096;

/**
 * A secret goes into an HTTP header, so whitespace or control characters would break the
 * request (and fetch's error could quote it); one shorter than the redactor's shortest run
 * could not be redacted without shredding ordinary text. Any other printable ASCII is fine: a
 * compatible server may issue keys with hyphens or other punctuation. Never echoes the value.
 */
function checkSecret(
  field: string,
  what: string,
  value: string,
  max: number,
  hint = `Fix or unset ${field}.`,
): void {
  if (value.length >= MIN_SECRET_RUN && value.length <= max && /^[\x21-\x7e]+$/.test(value)) return;
  const problem =
    value.length < MIN_SECRET_RUN
      ? `is too short (${value.length} characters; at least ${MIN_SECRET_RUN} are needed so that it can be redacted from every output)`
      : value.length > max
        ? `is too long (${value.length} characters; at most ${max})`
        : 'is malformed (expected printable ASCII characters, no spaces or control characters)';
  throw new ZoteusError('validation_error', `${what} ${problem}.`, { field, hint });
}

/** The Zotero API key rule of loadConfig, for a key typed in by a person (`zot config init`). */
export function checkApiKey(field: string, value: string): void {
  checkSecret(field, 'The API key', value, API_KEY_MAX);
}

/** The first of `names` set (non-empty) in the environment. */
function pickName(env: Env, names: readonly string[]): string | undefined {
  return names.find((name) => env[name] !== undefined && env[name] !== '');
}

function invalid(name: string, value: string, expected: string): ZoteusError {
  return new ZoteusError('validation_error', `${name} must be ${expected}; got '${value}'.`, {
    field: name,
    hint: `Fix or unset ${name}.`,
  });
}

function parseBool(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  const v = value.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw invalid(name, value, 'true or false');
}

function parseInt10(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value.trim())) throw invalid(name, value, `an integer >= ${min}`);
  const n = Number(value.trim());
  if (!Number.isSafeInteger(n) || n < min) throw invalid(name, value, `an integer >= ${min}`);
  return n;
}

function parseChoice<T extends string>(
  name: string,
  value: string | undefined,
  choices: readonly T[],
  fallback: T,
): T {
  if (value === undefined || value === '') return fallback;
  const v = value.trim().toLowerCase();
  if ((choices as readonly string[]).includes(v)) return v as T;
  throw invalid(name, value, `one of ${choices.join(', ')}`);
}

export function parseApiUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(name, value, 'an http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(name, value, 'an http(s) URL');
  if (url.username || url.password)
    throw invalid(name, '(URL with credentials)', 'a URL without credentials');
  return url.toString().replace(/\/+$/, '');
}

export function configFilePath(env: Env): string {
  return join(env.ZOT_CONFIG_DIR || platformConfigDir(env), 'config.json');
}

/** Reads the config file; a missing file is an empty one, a corrupt file is an error. */
export function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw new ZoteusError('validation_error', `Cannot read the config file ${path}.`, { cause: error });
  }
  let parsed: Partial<ConfigFile> | null;
  try {
    parsed = JSON.parse(text) as Partial<ConfigFile> | null;
  } catch {
    // Only where: JSON.parse's own message quotes the text around the error, and the text
    // around a typo in this file is often the api_key.
    const { line, column } = lineAndColumn(text, jsonErrorOffset(text));
    throw new ZoteusError(
      'validation_error',
      `The config file ${path} is not valid JSON (line ${line}, column ${column}).`,
      { hint: `Fix it by hand${onlyOn('cli', ' or run `zot config init` again')}.` },
    );
  }
  if (typeof parsed !== 'object' || parsed === null || typeof parsed.profiles !== 'object') {
    throw new ZoteusError(
      'validation_error',
      `The config file ${path} is not valid (no "profiles" object).`,
      {
        hint: `Fix it by hand${onlyOn('cli', ' or run `zot config init` again')}.`,
      },
    );
  }
  return { default_profile: parsed.default_profile, profiles: parsed.profiles ?? {} };
}

/** 1-based line and column of a character offset (UTF-16 units, as an editor counts them). */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

/**
 * Offset of the first character that makes `text` not JSON (RFC 8259), `text.length` when it
 * ends too early. JSON.parse says where only in some of its messages, and quotes the text in
 * others, so the place is found again here. Iterative, with its own stack: a deeply nested file
 * cannot overflow the call stack.
 */
export function jsonErrorOffset(text: string): number {
  const n = text.length;
  const stack: string[] = [];
  let i = 0;
  const skipSpace = (): void => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  /** Reads a string at `i`; false (with `i` at the fault) when it is not one. */
  const readString = (): boolean => {
    if (text[i] !== '"') return false;
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c !== 0x5c) {
        i++;
        continue;
      }
      const escape = text[i + 1];
      if (escape === 'u') {
        i += 2;
        for (let k = 0; k < 4; k++, i++) if (!/^[0-9a-fA-F]$/.test(text[i] ?? '')) return false;
      } else if (escape !== undefined && '"\\/bfnrt'.includes(escape)) i += 2;
      else {
        i++;
        return false;
      }
    }
    return false;
  };
  const digits = (): boolean => {
    const from = i;
    while (i < n && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
    return i > from;
  };
  /** Reads a number at `i`; false (with `i` at the fault) when it is not one. */
  const readNumber = (): boolean => {
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else if (!digits()) return false;
    if (text[i] === '.') {
      i++;
      if (!digits()) return false;
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      if (!digits()) return false;
    }
    return true;
  };
  /** After `{` or `,` in an object: a key and its colon. */
  const readKey = (): boolean => {
    skipSpace();
    if (!readString()) return false;
    skipSpace();
    if (text[i] !== ':') return false;
    i++;
    return true;
  };
  for (;;) {
    // A value is expected at `i`.
    skipSpace();
    const c = text[i];
    if (c === '{' || c === '[') {
      i++;
      skipSpace();
      if (text[i] === (c === '{' ? '}' : ']')) i++;
      else {
        stack.push(c);
        if (c === '{' && !readKey()) return i;
        continue;
      }
    } else if (c === '"') {
      if (!readString()) return i;
    } else if (text.startsWith('true', i) || text.startsWith('null', i)) i += 4;
    else if (text.startsWith('false', i)) i += 5;
    else if (!readNumber()) return i;
    // A value ended: close containers, or go on to the next element.
    for (;;) {
      skipSpace();
      const open = stack[stack.length - 1];
      if (open === undefined) return i < n ? i : n;
      if (text[i] === ',') {
        i++;
        if (open === '{' && !readKey()) return i;
        break;
      }
      if (text[i] !== (open === '{' ? '}' : ']')) return i;
      i++;
      stack.pop();
    }
  }
}

export interface LoadOptions {
  /** `--profile NAME`; wins over ZOT_PROFILE. */
  profile?: string | undefined;
  /** `zot config init` creates the profile it names, so it may not exist yet. */
  allowMissingProfile?: boolean;
}

export function loadConfig(env: Env, options: LoadOptions = {}): Config {
  const sources: Record<string, Source> = {};
  const configFile = configFilePath(env);
  const requested = options.profile ?? (env.ZOT_PROFILE || undefined);
  const file = readConfigFile(configFile);
  const profileName = requested ?? file.default_profile ?? (file.profiles.default ? 'default' : undefined);
  let profile: Profile = {};
  if (profileName !== undefined) {
    const found = file.profiles[profileName];
    if (found) profile = found;
    else if (requested !== undefined && !options.allowMissingProfile) {
      const known = Object.keys(file.profiles);
      throw new ZoteusError('validation_error', `Profile '${requested}' is not in ${configFile}.`, {
        field: options.profile !== undefined ? 'profile' : 'ZOT_PROFILE',
        hint: known.length
          ? `Known profiles: ${known.join(', ')}.`
          : `Add it to ${configFile}${onlyOn('cli', ' (`zot config init` writes one)')}.`,
      });
    }
  }

  /** env (with alias) > profile > undefined, recording where the value came from. */
  const pick = (key: string, names: string[], fromProfile: unknown): string | undefined => {
    for (const n of names) {
      const v = env[n];
      if (v !== undefined && v !== '') {
        sources[key] = 'env';
        return v;
      }
    }
    if (fromProfile !== undefined && fromProfile !== null && fromProfile !== '') {
      sources[key] = 'profile';
      return String(fromProfile);
    }
    sources[key] = 'default';
    return undefined;
  };

  const apiKeyFrom = pickName(env, ['ZOTERO_API_KEY', 'ZOT_API_KEY']);
  const apiKey = pick('apiKey', ['ZOTERO_API_KEY', 'ZOT_API_KEY'], profile.api_key)?.trim();
  if (apiKey !== undefined && apiKeyFrom !== undefined)
    checkSecret(apiKeyFrom, apiKeyFrom, apiKey, API_KEY_MAX);
  else if (apiKey !== undefined) {
    checkSecret(
      'ZOTERO_API_KEY',
      `The api_key of profile '${profileName}' in ${configFile}`,
      apiKey,
      API_KEY_MAX,
      `Fix api_key in ${configFile}${onlyOn('cli', ' (or run `zot config init` again)')}, or set ZOTERO_API_KEY.`,
    );
  }
  const localApiKey = pick('localApiKey', ['ZOTEUS_LOCAL_API_KEY'], profile.local_api_key)?.trim();
  if (localApiKey !== undefined)
    checkSecret(
      'ZOTEUS_LOCAL_API_KEY',
      sources.localApiKey === 'env'
        ? 'ZOTEUS_LOCAL_API_KEY'
        : `The local_api_key of profile '${profileName}' in ${configFile}`,
      localApiKey,
      API_KEY_MAX,
    );
  const libraryIdText = pick('libraryId', ['ZOTERO_LIBRARY_ID', 'ZOT_LIBRARY_ID'], profile.library_id);
  const libraryId =
    libraryIdText === undefined ? undefined : parseInt10('ZOTERO_LIBRARY_ID', libraryIdText, 0, 1);
  const libraryType = parseChoice(
    'ZOTERO_LIBRARY_TYPE',
    pick('libraryType', ['ZOTERO_LIBRARY_TYPE'], profile.library_type),
    ['user', 'group'] as const,
    'user',
  );
  const apiUrl = parseApiUrl(
    'ZOTERO_API_URL',
    pick('apiUrl', ['ZOTERO_API_URL'], profile.api_url) ?? 'https://api.zotero.org',
  );
  const zoteroDataDir =
    pick('zoteroDataDir', ['ZOTERO_DATA_DIR'], profile.zotero_data_dir) ?? defaultZoteroDataDir(env);
  const dataDir = pick('dataDir', ['ZOTEUS_DATA_DIR'], profile.data_dir) ?? platformDataDir(env);
  const format = env.ZOT_FORMAT
    ? parseChoice('ZOT_FORMAT', env.ZOT_FORMAT, ['json', 'table'] as const, 'json')
    : undefined;

  return {
    apiKey,
    libraryId,
    libraryType,
    apiUrl,
    format,
    profile: profileName,
    configFile,
    cacheDir: env.ZOT_CACHE_DIR || platformCacheDir(env),
    // Read by bin/zot before any config (surfaces/cli/compile-cache.ts); checked here.
    compileCache: parseChoice('ZOTEUS_COMPILE_CACHE', env.ZOTEUS_COMPILE_CACHE, ['on', 'off'] as const, 'on'),
    dataDir,
    zoteroDataDir,
    local: parseChoice('ZOTEUS_LOCAL', env.ZOTEUS_LOCAL, ['auto', 'on', 'off'] as const, 'auto'),
    localApiKey,
    writes: parseChoice('ZOTEUS_WRITES', env.ZOTEUS_WRITES, ['auto', 'desktop', 'cloud'] as const, 'auto'),
    indexFulltext: parseBool('ZOTEUS_INDEX_FULLTEXT', env.ZOTEUS_INDEX_FULLTEXT, false),
    indexAutoMinItems: parseInt10('ZOTEUS_INDEX_AUTO_MIN_ITEMS', env.ZOTEUS_INDEX_AUTO_MIN_ITEMS, 2000, 0),
    ...parseEmbeddings(env),
    readOnly: parseBool('ZOTEUS_READ_ONLY', env.ZOTEUS_READ_ONLY, false),
    toolsets: parseToolsets('ZOTEUS_TOOLSETS', env.ZOTEUS_TOOLSETS),
    confirmBulkWrites: parseInt10('ZOTEUS_CONFIRM_BULK_WRITES', env.ZOTEUS_CONFIRM_BULK_WRITES, 0, 0),
    allowDelete: parseBool('ZOTEUS_ALLOW_DELETE', env.ZOTEUS_ALLOW_DELETE, false),
    maxCollections: parseInt10('ZOTEUS_MAX_COLLECTIONS', env.ZOTEUS_MAX_COLLECTIONS, 100_000, 1),
    retryBudgetMs: parseInt10('ZOTEUS_RETRY_BUDGET_MS', env.ZOTEUS_RETRY_BUDGET_MS, 60_000, 0),
    timeoutMs: parseInt10('ZOTEUS_TIMEOUT_MS', env.ZOTEUS_TIMEOUT_MS, 30_000, 1),
    noColor: env.NO_COLOR !== undefined && env.NO_COLOR !== '',
    resolvers: parseResolvers(env),
    metadata: parseMetadata(env),
    citations: parseCitations(env),
    openAccess: parseOpenAccess(env),
    sources,
  };
}

/** Defaults of each embeddings provider (README, "Configuration"). */
export const EMBEDDINGS_DEFAULTS = {
  openai: { url: 'https://api.openai.com/v1', model: 'text-embedding-3-small' },
  ollama: { url: 'http://127.0.0.1:11434', model: 'nomic-embed-text' },
} as const;

type EmbeddingsConfig = Pick<
  Config,
  'embeddings' | 'embeddingsUrl' | 'embeddingsModel' | 'embeddingsApiKey' | 'embeddingsBatch'
>;

function parseEmbeddings(env: Env): EmbeddingsConfig {
  const embeddings = parseChoice(
    'ZOTEUS_EMBEDDINGS',
    env.ZOTEUS_EMBEDDINGS,
    ['off', 'openai', 'ollama'] as const,
    'off',
  );
  const defaults = embeddings === 'off' ? undefined : EMBEDDINGS_DEFAULTS[embeddings];
  // A set variable is validated even while embeddings are off: a typo surfaces now, not on the
  // day someone turns them on.
  const urlText = env.ZOTEUS_EMBEDDINGS_URL?.trim() || defaults?.url;
  const keyName = env.ZOTEUS_EMBEDDINGS_API_KEY?.trim() ? 'ZOTEUS_EMBEDDINGS_API_KEY' : 'OPENAI_API_KEY';
  const apiKey = env[keyName]?.trim() || undefined;
  // OPENAI_API_KEY belongs to other tools too: it only stops Zoteus when Zoteus would send it.
  const checked = keyName === 'ZOTEUS_EMBEDDINGS_API_KEY' || embeddings === 'openai';
  if (apiKey !== undefined && checked) checkSecret(keyName, keyName, apiKey, EMBEDDINGS_KEY_MAX);
  return {
    embeddings,
    embeddingsUrl: urlText === undefined ? undefined : parseApiUrl('ZOTEUS_EMBEDDINGS_URL', urlText),
    embeddingsModel: env.ZOTEUS_EMBEDDINGS_MODEL?.trim() || defaults?.model,
    embeddingsApiKey: apiKey,
    embeddingsBatch: parseInt10('ZOTEUS_EMBEDDINGS_BATCH', env.ZOTEUS_EMBEDDINGS_BATCH, 64, 1),
  };
}

function parseResolvers(env: Env): Config['resolvers'] {
  const url = (name: string, fallback: string) => {
    const value = env[name]?.trim();
    return parseApiUrl(name, value ? value : fallback);
  };
  const mailto = env.ZOTEUS_CROSSREF_MAILTO?.trim() || undefined;
  if (mailto !== undefined && !/^[^\s@]+@[^\s@]+$/.test(mailto)) {
    throw invalid('ZOTEUS_CROSSREF_MAILTO', mailto, 'an e-mail address');
  }
  return {
    crossref: url('ZOTEUS_CROSSREF_URL', 'https://api.crossref.org'),
    datacite: url('ZOTEUS_DATACITE_URL', 'https://api.datacite.org'),
    arxiv: url('ZOTEUS_ARXIV_URL', 'https://export.arxiv.org/api'),
    mailto,
    openlibrary: url('ZOTEUS_OPENLIBRARY_URL', 'https://openlibrary.org'),
    loc: url('ZOTEUS_LOC_URL', 'http://lx2.loc.gov:210/lcdb'),
  };
}

/** Longest OpenAlex or Semantic Scholar key accepted. */
const SERVICE_KEY_MAX = 256;

function parseMetadata(env: Env): Config['metadata'] {
  const url = (name: string, fallback: string) => {
    const value = env[name]?.trim();
    return parseApiUrl(name, value ? value : fallback);
  };
  const key = (name: string) => {
    const value = env[name]?.trim() || undefined;
    if (value !== undefined) checkSecret(name, name, value, SERVICE_KEY_MAX);
    return value;
  };
  return {
    openalex: url('ZOTEUS_OPENALEX_URL', 'https://api.openalex.org'),
    openalexKey: key('ZOTEUS_OPENALEX_API_KEY'),
    semanticScholar: url('ZOTEUS_SEMANTIC_SCHOLAR_URL', 'https://api.semanticscholar.org/graph/v1'),
    semanticScholarKey: key('ZOTEUS_SEMANTIC_SCHOLAR_API_KEY'),
  };
}

function parseOpenAccess(env: Env): Config['openAccess'] {
  const url = (name: string, fallback: string) => {
    const value = env[name]?.trim();
    return parseApiUrl(name, value ? value : fallback);
  };
  const email = env.ZOTEUS_UNPAYWALL_EMAIL?.trim() || undefined;
  if (email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(email))
    throw invalid('ZOTEUS_UNPAYWALL_EMAIL', email, 'an e-mail address');
  return {
    unpaywallUrl: url('ZOTEUS_UNPAYWALL_URL', 'https://api.unpaywall.org'),
    unpaywallEmail: email,
    maxBytes: parseInt10('ZOTEUS_OA_MAX_MB', env.ZOTEUS_OA_MAX_MB, 100, 1) * 1024 * 1024,
  };
}

function parseCitations(env: Env): Config['citations'] {
  const url = (name: string, fallback: string) => {
    const value = env[name]?.trim();
    return parseApiUrl(name, value ? value : fallback);
  };
  const style = env.ZOTEUS_CITATION_STYLE?.trim() || 'apa';
  if (style.length > 1024 || style.includes('\0'))
    throw invalid('ZOTEUS_CITATION_STYLE', style.slice(0, 80), 'a style id or the path of a .csl file');
  return {
    style,
    stylesUrl: url('ZOTEUS_STYLES_URL', 'https://www.zotero.org/styles'),
    localesUrl: url('ZOTEUS_LOCALES_URL', CSL_LOCALES_URL),
  };
}

/**
 * The refusal of a write in read-only mode, in the caller's terms: the server's setting, or
 * (on a shared deployment) the read-only access the caller chose when signing in.
 */
export function readOnlyRefusal(
  config: Pick<Config, 'readOnly' | 'readOnlyGrant'>,
  what: string,
): ZoteusError {
  if (config.readOnlyGrant && !config.readOnly) {
    return new ZoteusError(
      'permission_denied',
      `${what} changes the library, and you signed in to this server with read-only access.`,
      { hint: 'Sign in again and allow write access (the zotero:write scope) to make changes.' },
    );
  }
  return new ZoteusError('permission_denied', `${what} changes the library, and read-only mode is on.`, {
    hint: `Unset ZOTEUS_READ_ONLY to allow writes${onlyOn('cli', ', or use --dry-run to see the planned change')}.`,
  });
}
