/**
 * `zot schema` without loading the declarations: it answers from dist/cli-manifest.json,
 * the same tree written at build time from the same declarations. Anything this path does
 * not handle (other flags, a missing manifest) returns undefined and the full CLI answers.
 */
import { loadConfig } from '../../core/config.js';
import { toZoteusError } from '../../core/errors.js';
import { createRedactor, envSecrets } from '../../core/redact.js';
import { errorEnvelope, meta, newRequestId, successEnvelope } from './envelope.js';
import { chooseFormat, terminalWidth, useColour, type CliIO } from './io.js';
import { readManifest, type ManifestNode } from './manifest.js';
import { noCommand } from './no-command.js';
import { createWriter } from './output.js';

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
  const root = readManifest(manifestUrl)?.schema;
  if (!root) return undefined;
  const startedAt = Date.now();
  const requestId = newRequestId();
  const format = chooseFormat(args.includes('--json'), env.ZOT_FORMAT, Boolean(io.stdout.isTTY));
  // Fitted to the terminal as every table is (the whole tree holds long help texts).
  const writer = createWriter(io, format, createRedactor(envSecrets(env)), useColour(io.stdout, env), {
    width: terminalWidth(io.stdout, env),
  });
  try {
    loadConfig(env); // the same startup checks as every other command
    const node = find(root, words);
    if (!node) {
      const names: string[] = [];
      const walk = (n: ManifestNode) => {
        if (n.name !== 'zot') names.push(n.name);
        n.subcommands.forEach(walk);
      };
      walk(root);
      throw noCommand(words, names);
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
