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
   * False only when nothing in `text` can be changed: no configured secret in it and nothing a
   * pattern needs. Holds for the JSON text of a value too, for every string inside it (JSON
   * escapes none of the characters a key or a pattern's words are made of; a secret that has
   * such characters makes this always true).
   */
  mayChange(text: string): boolean;
  /** The same redactor, also removing these extra secrets. */
  with(secrets: Iterable<string | undefined>): Redactor;
}

export function createRedactor(secrets: Iterable<string | undefined> = []): Redactor {
  // Only secrets long enough to be keys: redacting a two-letter string would shred the text.
  const known = [...new Set([...secrets].filter((s): s is string => typeof s === 'string' && s.length >= 8))];
  known.sort((a, b) => b.length - a.length);
  const redact = ((text: string): string => {
    let out = text;
    for (const secret of known) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    if (!MAY_HOLD_SECRET.test(out)) return out;
    for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, `$1${REDACTED}`);
    return out;
  }) as Redactor;
  const escapable = known.some((secret) => /[^\w.~+/=-]/.test(secret));
  redact.mayChange = (text) =>
    escapable || known.some((secret) => text.includes(secret)) || MAY_HOLD_SECRET.test(text);
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
  'ZOTEUS_EMBEDDINGS_API_KEY',
  'OPENAI_API_KEY',
] as const;

/** The secrets of an environment (see SECRET_ENV_VARS). */
export function envSecrets(env: Readonly<Record<string, string | undefined>>): Array<string | undefined> {
  return SECRET_ENV_VARS.map((name) => env[name]);
}

/** The secrets of a loaded configuration (the Zotero key, the embeddings key). */
export function configSecrets(config: {
  apiKey: string | undefined;
  embeddingsApiKey: string | undefined;
}): Array<string | undefined> {
  return [config.apiKey, config.embeddingsApiKey];
}
