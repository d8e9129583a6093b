/**
 * dist/cli-manifest.json, written at build time from the declarations
 * (scripts/build-manifest.mjs): the `zot schema` tree, so `zot schema` answers without
 * loading them; per command path the tool modules it needs, so a command loads only those
 * (fast-start.ts); and each command's parameters, so its tree is built without deriving
 * them again. A test checks all three against the live declarations. dist/cli-start.json
 * holds the same without the schema tree, for every command's start (`readStartManifest`).
 */
import { readFileSync } from 'node:fs';
import type { GroupDeclaration } from '../../core/tool.js';
import { CLI_VERSION } from '../../core/version.js';
import type { ParamsTable } from './params.js';
import type { CommandRefs } from './refs.js';

export interface ManifestNode {
  name: string;
  subcommands: ManifestNode[];
  [key: string]: unknown;
}

/** Command path (words joined by one space) → dist-relative tool modules; null: it needs them all. */
export type ModuleRoutes = Record<string, string[] | null>;

export interface Manifest {
  cli_version: string;
  schema: ManifestNode;
  modules: ModuleRoutes;
  /** Each tool command's parameters (params.ts `paramsTable`). */
  params: ParamsTable;
  /** Each tool's commands, to write references to other tools in messages (refs.ts). */
  commands: CommandRefs;
  /** The help of the CLI groups (tools/index.ts `groups`), for a tree built from some tools only. */
  groups: GroupDeclaration[];
}

/** What a command reads at start (dist/cli-start.json): the manifest without the schema tree. */
export type StartManifest = Omit<Manifest, 'schema'>;

/** The manifest, or undefined when it is missing, unreadable or from another version. */
export function readManifest(url: URL): Manifest | undefined {
  const manifest = readStartManifest(url) as Partial<Manifest> | undefined;
  return manifest?.schema ? (manifest as Manifest) : undefined;
}

/** dist/cli-start.json (or the whole manifest), or undefined when it is missing, unreadable or from another version. */
export function readStartManifest(url: URL): StartManifest | undefined {
  try {
    const manifest = JSON.parse(readFileSync(url, 'utf8')) as Partial<StartManifest>;
    if (
      manifest.cli_version !== CLI_VERSION ||
      !manifest.modules ||
      !manifest.params ||
      !manifest.commands ||
      !manifest.groups
    )
      return undefined;
    return manifest as StartManifest;
  } catch {
    return undefined;
  }
}
