#!/usr/bin/env node
/**
 * Writes dist/bundle/: the CLI (`dist/bin/zot.js`) and every tool declaration bundled with
 * esbuild into a few shared chunks, so a `zot` process loads a handful of files instead of
 * about 170 modules (95 of them zod's). Each tool stays its own entry at its own path
 * (`dist/bundle/tools/...`), so the build-time manifest's per-command module lists work
 * unchanged and every command still loads only the declarations it needs; they all share one
 * copy of zod and of the core. better-sqlite3's JavaScript is bundled too (its addon is loaded
 * by `core/sqlite-driver.ts`, never by the bundled code); heavy packages stay outside.
 * `bin/zot` runs the bundle when it exists, else `dist/bin/zot.js`. Derived, never edited.
 */
import { copyFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
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

/**
 * A CommonJS package bundled into ES module chunks (better-sqlite3) `require()`s Node's own
 * modules; esbuild would leave a `require` that an ES module has not got, so each such
 * require gets a small module that re-exports the built-in.
 */
const requiredBuiltins = {
  name: 'required-builtins',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) =>
      args.kind === 'require-call' && isBuiltin(args.path)
        ? { path: args.path.replace(/^node:/, ''), namespace: 'required-builtin' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'required-builtin' }, (args) => ({
      contents: `export * from 'node:${args.path}';`,
      loader: 'js',
    }));
  },
};

rmSync(out, { recursive: true, force: true });
const result = await build({
  entryPoints: [join(dist, 'bin', 'zot.js'), ...walk(join(dist, 'tools'))],
  outbase: dist,
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  plugins: [requiredBuiltins],
  external: [
    // better-sqlite3 finds its addon with it only when not given one, which never happens here.
    'bindings',
    'pdfjs-dist',
    'pdfjs-dist/*',
    '@modelcontextprotocol/sdk',
    '@modelcontextprotocol/sdk/*',
  ],
  logLevel: 'warning',
  metafile: true,
});
// `import * as z from 'zod'` with only `z.x` uses lets esbuild drop what is unused; one use of
// the namespace as a value (or a dynamic `import('zod')`) keeps all of zod, its 50 message
// languages among it (+360 KB to compile in every process). Refuse such a bundle.
const locales = Object.values(result.metafile.outputs)
  .flatMap((o) => Object.entries(o.inputs))
  .filter(([p, i]) => i.bytesInOutput > 0 && /zod\/v4\/locales\/(?!en\.js)/.test(p))
  .map(([p]) => p);
if (locales.length > 0) {
  console.error(
    `bundle-cli: zod's whole namespace is kept (${locales.length} locale modules, e.g. ${locales[0]}): import zod's names, not its namespace object.`,
  );
  process.exit(1);
}
// bin/zot.js finds the manifest beside it, one folder up.
copyFileSync(join(dist, 'cli-manifest.json'), join(out, 'cli-manifest.json'));
