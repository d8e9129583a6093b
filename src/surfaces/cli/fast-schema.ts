/**
 * `zot schema` without loading the declarations: it answers from dist/cli-manifest.json,
 * the same tree written at build time from the same declarations. Anything this path does
 * not handle (other flags, a missing manifest) returns undefined and the full CLI answers.
 */
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../core/config.js';
import { ZoteusError, toZoteusError } from '../../core/errors.js';
import { createRedactor } from '../../core/redact.js';
import { CLI_VERSION } from '../../core/version.js';
import { errorEnvelope, meta, newRequestId, successEnvelope } from './envelope.js';
import { chooseFormat, useColour, type CliIO } from './io.js';
import { createWriter } from './output.js';

interface ManifestNode {
  name: string;
  subcommands: ManifestNode[];
  [key: string]: unknown;
}

export function readManifest(url: URL): ManifestNode | undefined {
  try {
    const manifest = JSON.parse(readFileSync(url, 'utf8')) as { cli_version?: string; schema?: ManifestNode };
    return manifest.cli_version === CLI_VERSION ? manifest.schema : undefined;
  } catch {
    return undefined;
  }
}

function find(root: ManifestNode, words: readonly string[]): ManifestNode | undefined {
  let node = root;
  for (let i = 1; i <= words.length; i += 1) {
    const name = words.slice(0, i).join(' ');
    const next = node.subcommands.find((n) => n.name === name);
    if (!next) return undefined;
    node = next;
  }
  return node;
}

export function fastSchema(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: CliIO,
  manifestUrl: URL,
): number | undefined {
  const words = args.filter((a) => a !== '--json');
  if (words.some((w) => w.startsWith('-'))) return undefined;
  const root = readManifest(manifestUrl);
  if (!root) return undefined;
  const startedAt = Date.now();
  const requestId = newRequestId();
  const format = chooseFormat(args.includes('--json'), env.ZOT_FORMAT, Boolean(io.stdout.isTTY));
  const writer = createWriter(
    io,
    format,
    createRedactor([env.ZOTERO_API_KEY, env.ZOT_API_KEY]),
    useColour(io.stdout, env),
  );
  try {
    loadConfig(env); // the same startup checks as every other command
    const node = find(root, words);
    if (!node) {
      throw new ZoteusError('not_found', `No command \`zot ${words.join(' ')}\`.`, {
        hint: 'Run `zot schema` for the whole command tree.',
      });
    }
    if (format === 'json') writer.envelope(successEnvelope(node, meta(requestId, startedAt, Date.now())));
    else writer.table(node, undefined, undefined);
    return 0;
  } catch (error) {
    const e = toZoteusError(error);
    writer.error(e, errorEnvelope(e, meta(requestId, startedAt, Date.now())));
    return e.exitCode;
  }
}
