/**
 * API keys must never reach stdout, stderr, logs or error messages. Every text that
 * leaves the process passes through a Redactor built from the configured secrets.
 */

export const REDACTED = '[REDACTED]';

/** Header and query forms a key can take in a message from a library or a server. */
const SECRET_PATTERNS: RegExp[] = [
  /(Zotero-API-Key\s*[:=]\s*)([^\s,;"']+)/gi,
  /(Authorization\s*[:=]\s*Bearer\s+)([^\s,;"']+)/gi,
  /(\bBearer\s+)([A-Za-z0-9._~+/-]{12,})/g,
  /([?&](?:key|api_key|apiKey)=)([^&\s"']+)/gi,
];

/**
 * What every pattern above needs to match: one scan tells that most strings hold none, where
 * running each pattern costs a `zot search` answer of 25 items 7 ms.
 */
const MAY_HOLD_SECRET = /zotero-api-key|authorization|bearer|[?&](?:key|api_key|apikey)=/i;

export interface Redactor {
  (text: string): string;
  /**
   * False only when nothing in `text` can be changed: no 8-character run of a configured secret
   * in it and nothing a pattern needs. Holds for the JSON text of a value too, for every string
   * inside it: a secret's JSON-escaped form is matched as well as the secret itself.
   */
  mayChange(text: string): boolean;
  /** The same redactor, also removing these extra secrets. */
  with(secrets: Iterable<string | undefined>): Redactor;
}

/**
 * The shortest run of a secret's characters that is removed, and so the shortest secret the
 * configuration accepts (config.ts): a message cut through a key must not print most of it,
 * and redacting runs shorter than this would shred ordinary text.
 */
export const MIN_SECRET_RUN = 8;

/**
 * Runs are found from anchors: the 6-character pieces of a secret starting at every third
 * character. Any 8 consecutive characters of a secret hold one of them whole (the next piece
 * starts at most 2 characters in and ends by the 8th), so one native `includes` per anchor tells
 * that a text holds no run, and only where an anchor occurs do the 8-character windows around it
 * need a look.
 */
const ANCHOR = 6;
const STRIDE = MIN_SECRET_RUN + 1 - ANCHOR;

interface SecretRuns {
  /** Every 8-character window of every secret (and of its JSON-escaped form). */
  windows: ReadonlySet<string>;
  anchors: readonly string[];
}

function compileSecrets(known: readonly string[]): SecretRuns {
  const windows = new Set<string>();
  const anchors = new Set<string>();
  for (const secret of known) {
    // A secret with a quote or a backslash stands escaped in JSON text: match that form too.
    const escaped = JSON.stringify(secret).slice(1, -1);
    for (const form of escaped === secret ? [secret] : [secret, escaped]) {
      for (let i = 0; i + MIN_SECRET_RUN <= form.length; i++) windows.add(form.slice(i, i + MIN_SECRET_RUN));
      for (let i = 0; i + ANCHOR <= form.length; i += STRIDE) anchors.add(form.slice(i, i + ANCHOR));
    }
  }
  return { windows, anchors: [...anchors] };
}

/**
 * `text` without any run of 8 or more characters of a secret: each maximal stretch covered by
 * such windows becomes one REDACTED. A window holds one anchor at 0, 1 or 2 characters from its
 * start, so the windows to test are the 3 starting at or just before each anchor found.
 */
function removeRuns(text: string, runs: SecretRuns): string {
  let starts: number[] | undefined;
  for (const anchor of runs.anchors) {
    for (let at = text.indexOf(anchor); at >= 0; at = text.indexOf(anchor, at + 1)) {
      for (let i = Math.max(0, at - STRIDE + 1); i <= at && i + MIN_SECRET_RUN <= text.length; i++) {
        if (runs.windows.has(text.slice(i, i + MIN_SECRET_RUN))) (starts ??= []).push(i);
      }
    }
  }
  if (starts === undefined) return text;
  starts.sort((a, b) => a - b);
  let out = '';
  let kept = 0;
  let runStart = starts[0] as number;
  let runEnd = runStart;
  for (const start of starts) {
    if (start > runEnd) {
      out += text.slice(kept, runStart) + REDACTED;
      kept = runEnd;
      runStart = start;
    }
    runEnd = Math.max(runEnd, start + MIN_SECRET_RUN);
  }
  return out + text.slice(kept, runStart) + REDACTED + text.slice(runEnd);
}

export function createRedactor(secrets: Iterable<string | undefined> = []): Redactor {
  // Shorter strings are not keys (the configuration refuses them): redacting them would shred text.
  const known = [
    ...new Set([...secrets].filter((s): s is string => typeof s === 'string' && s.length >= MIN_SECRET_RUN)),
  ];
  const runs = compileSecrets(known);
  const redact = ((text: string): string => {
    const out = runs.anchors.length > 0 ? removeRuns(text, runs) : text;
    if (!MAY_HOLD_SECRET.test(out)) return out;
    return SECRET_PATTERNS.reduce((acc, pattern) => acc.replace(pattern, `$1${REDACTED}`), out);
  }) as Redactor;
  redact.mayChange = (text) =>
    runs.anchors.some((anchor) => text.includes(anchor)) || MAY_HOLD_SECRET.test(text);
  redact.with = (more) => createRedactor([...known, ...more]);
  return redact;
}

/**
 * The JSON text of a value with every string redacted. Serialized once; walked string by
 * string (redactValue) only when the text shows something a secret or a pattern could match,
 * which an answer rarely does: the walk cost a `zot search` answer of 25 items 4 ms.
 */
export function redactedJson(value: unknown, redact: Redactor): string {
  const text = JSON.stringify(value);
  return redact.mayChange(text) ? JSON.stringify(redactValue(value, redact)) : text;
}

/** Deep-redacts every string of a JSON-like value. */
export function redactValue<T>(value: T, redact: Redactor): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => redactValue(v, redact)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactValue(v, redact);
    return out as T;
  }
  return value;
}

/** The environment variables that hold secrets: redacted before the config is even loaded. */
export const SECRET_ENV_VARS = [
  'ZOTERO_API_KEY',
  'ZOT_API_KEY',
  'ZOTEUS_LOCAL_API_KEY',
  'ZOTEUS_EMBEDDINGS_API_KEY',
  'OPENAI_API_KEY',
  'ZOTEUS_OPENALEX_API_KEY',
  'ZOTEUS_SEMANTIC_SCHOLAR_API_KEY',
  'ZOTEUS_ZOTERO_OAUTH_SECRET',
] as const;

/** The secrets of an environment (see SECRET_ENV_VARS). */
export function envSecrets(env: Readonly<Record<string, string | undefined>>): Array<string | undefined> {
  return [
    ...SECRET_ENV_VARS.map((name) => env[name]),
    // A shared deployment's encryption keys, each on its own (one leaked key is enough).
    ...(env.ZOTEUS_SECRET_KEYS ?? '').split(',').map((entry) => entry.trim()),
    databasePassword(env.ZOTEUS_DATABASE_URL),
  ];
}

/** The password of a database URL (`postgres://user:password@host/db`), if it has one. */
function databasePassword(url: string | undefined): string | undefined {
  if (url === undefined || !URL.canParse(url)) return undefined;
  const password = new URL(url).password;
  return password === '' ? undefined : decodeURIComponent(password);
}

/** The secrets of a loaded configuration (the Zotero key, the desktop's local API key, the embeddings key, the metadata services' keys). */
export function configSecrets(config: {
  apiKey: string | undefined;
  localApiKey?: string | undefined;
  embeddingsApiKey: string | undefined;
  metadata?: { openalexKey: string | undefined; semanticScholarKey: string | undefined };
}): Array<string | undefined> {
  return [
    config.apiKey,
    config.localApiKey,
    config.embeddingsApiKey,
    config.metadata?.openalexKey,
    config.metadata?.semanticScholarKey,
  ];
}
