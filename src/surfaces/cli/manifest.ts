/**
 * dist/cli-manifest.json, written at build time from the declarations
 * (scripts/build-manifest.mjs): the `zot schema` tree, so `zot schema` answers without
 * loading them, and per command path the tool modules it needs, so a command loads only
 * those (fast-start.ts). A test checks both against the live declarations.
 */
import { readFileSync } from 'node:fs';
import { CLI_VERSION } from '../../core/version.js';

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
}

/** The manifest, or undefined when it is missing, unreadable or from another version. */
export function readManifest(url: URL): Manifest | undefined {
  try {
    const manifest = JSON.parse(readFileSync(url, 'utf8')) as Partial<Manifest>;
    if (manifest.cli_version !== CLI_VERSION || !manifest.schema || !manifest.modules) return undefined;
    return manifest as Manifest;
  } catch {
    return undefined;
  }
}
