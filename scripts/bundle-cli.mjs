#!/usr/bin/env node
/**
 * Writes dist/bundle/: the CLI (`dist/bin/zot.js`) and every tool declaration bundled with
 * esbuild into a few shared chunks, so a `zot` process loads a handful of files instead of
 * about 170 modules (95 of them zod's). Each tool stays its own entry at its own path
 * (`dist/bundle/tools/...`), so the build-time manifest's per-command module lists work
 * unchanged and every command still loads only the declarations it needs; they all share one
 * copy of zod and of the core. Native and heavy packages stay outside (imported at run time).
 * `bin/zot` runs the bundle when it exists, else `dist/bin/zot.js`. Derived, never edited.
 */
import { copyFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const dist = fileURLToPath(new URL('../dist', import.meta.url));
const out = join(dist, 'bundle');
const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith('.js') ? [path] : [];
  });

rmSync(out, { recursive: true, force: true });
await build({
  entryPoints: [join(dist, 'bin', 'zot.js'), ...walk(join(dist, 'tools'))],
  outbase: dist,
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  external: [
    'better-sqlite3',
    'pdfjs-dist',
    'pdfjs-dist/*',
    '@modelcontextprotocol/sdk',
    '@modelcontextprotocol/sdk/*',
  ],
  logLevel: 'warning',
});
// bin/zot.js finds the manifest beside it, one folder up.
copyFileSync(join(dist, 'cli-manifest.json'), join(out, 'cli-manifest.json'));
