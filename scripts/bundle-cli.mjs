#!/usr/bin/env node
/**
 * Writes dist/bundle/: the CLI (`dist/bin/zot.js`) and every tool declaration bundled with
 * rolldown into shared chunks, as CommonJS, so a `zot` process loads a few files instead of
 * about 170 modules (95 of them zod's), and `bin/zot` can give V8 the code it compiled last
 * time (src/surfaces/cli/compile-cache.ts; Node 20 has a code cache for CommonJS only). Each
 * tool stays its own entry at its own path (`dist/bundle/tools/...`), so the build-time
 * manifest's per-command module lists hold unchanged and every command still loads only the
 * declarations it needs; they all share one copy of zod and of the core. better-sqlite3's
 * JavaScript is bundled too (its addon is loaded by `core/sqlite-driver.ts`, never by the
 * bundled code); ES-module and heavy packages stay outside. Derived, never edited.
 */
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const dist = fileURLToPath(new URL('../dist', import.meta.url));
const out = join(dist, 'bundle');
// The tool modules are those the manifest routes commands to (scripts/build-manifest.mjs), not
// whatever dist/tools holds: a module moved or deleted in src/ stays in dist/ until it is cleaned.
const manifest = JSON.parse(readFileSync(join(dist, 'cli-manifest.json'), 'utf8'));
const toolModules = [...new Set(Object.values(manifest.modules).flatMap((paths) => paths ?? []))];
/** Entry name (its path under dist/bundle, without `.js`) → compiled module. */
const entry = (path) => [
  path
    .slice(dist.length + 1, -'.js'.length)
    .split('\\')
    .join('/'),
  path,
];

rmSync(out, { recursive: true, force: true });
const bundle = await rolldown({
  input: Object.fromEntries([
    entry(join(dist, 'bin', 'zot.js')),
    entry(join(dist, 'surfaces', 'cli', 'compile-cache.js')),
    ...toolModules.sort().map((path) => entry(join(dist, path))),
  ]),
  platform: 'node',
  transform: { define: { ZOTEUS_BUNDLE: 'true' } },
  external: [
    // better-sqlite3 finds its addon with it only when not given one, which never happens here.
    'bindings',
    /^pdfjs-dist(\/|$)/,
    // The MCP SDK (loaded by `zot mcp` alone) stays a package of its own.
    /^@modelcontextprotocol\//,
  ],
  logLevel: 'warn',
});
// citeproc-js is CPAL-1.0 or AGPL: its copyright and licence notice travels with its code.
const require = createRequire(import.meta.url);
const citeprocFile = require.resolve('citeproc');
const citeprocNotice = /^\/\*[\s\S]*?\*\//.exec(readFileSync(citeprocFile, 'utf8'))?.[0] ?? '';
const { output } = await bundle.write({
  dir: out,
  format: 'cjs',
  // Entries export `default` as ES modules do, so bin/zot reads a tool module the same way.
  exports: 'named',
  entryFileNames: '[name].js',
  chunkFileNames: 'chunks/[name]-[hash].js',
});
await bundle.close();
// (rolldown's `banner` reaches entry chunks only: the notice is put in front of its chunk here.)
for (const chunk of output) {
  if (chunk.type !== 'chunk' || !citeprocNotice || !chunk.moduleIds.includes(citeprocFile)) continue;
  const file = join(out, chunk.fileName);
  writeFileSync(file, `${citeprocNotice}\n${readFileSync(file, 'utf8')}`);
}

// `import * as z from 'zod'` with only `z.x` uses lets the bundler drop what is unused; one use
// of the namespace as a value (or a dynamic `import('zod')`) keeps all of zod, its 50 message
// languages among it (+360 KB to compile in every process). Refuse such a bundle.
const locales = output
  .flatMap((chunk) => (chunk.type === 'chunk' ? Object.entries(chunk.modules) : []))
  .filter(([id, m]) => m.renderedLength > 0 && /zod[\\/]v4[\\/]locales[\\/](?!en\.js)/.test(id))
  .map(([id]) => id);
if (locales.length > 0) {
  console.error(
    `bundle-cli: zod's whole namespace is kept (${locales.length} locale modules, e.g. ${locales[0]}): import zod's names, not its namespace object.`,
  );
  process.exit(1);
}

// The package is "type": "module"; the bundle is CommonJS.
writeFileSync(join(out, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
// bin/zot.js finds the manifests one folder up, as dist/bin/zot.js does.
copyFileSync(join(dist, 'cli-manifest.json'), join(out, 'cli-manifest.json'));
copyFileSync(join(dist, 'cli-start.json'), join(out, 'cli-start.json'));
