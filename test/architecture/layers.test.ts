/**
 * The layers of docs/architecture.md, checked on every import edge of `src/`: static imports
 * and re-exports, `import()` and `require()` (ESLint's no-restricted-imports sees only the
 * first). Imports point one way: core ← render ← tools ← prompts/resources ← surfaces ← bin.
 * The MCP SDK is reached only from surfaces/mcp; the CLI gets to it through the one lazy
 * entry of `zot mcp`. `demo/` (the zotero.sqlite fixture builder and the sample libraries) is
 * beside the product, not in it: it may use core, and no product module may import it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');

/** Layer of a file under src/, lowest first. A file may import only its own or lower layers. */
const LAYERS: ReadonlyArray<{ name: string; under: string; rank: number }> = [
  { name: 'core', under: 'core/', rank: 0 },
  { name: 'render', under: 'render/', rank: 1 },
  { name: 'tools', under: 'tools/', rank: 2 },
  { name: 'prompts', under: 'prompts/', rank: 3 },
  { name: 'resources', under: 'resources/', rank: 3 },
  { name: 'surfaces/mcp', under: 'surfaces/mcp/', rank: 4 },
  { name: 'surfaces/cli', under: 'surfaces/cli/', rank: 4 },
  { name: 'bin', under: 'bin/', rank: 5 },
  // Built into dist/ so that `npm run demo` works in a checkout, left out of the package
  // (package.json "files"): rank 1 lets it import only core, OUTSIDE_PRODUCT keeps others out.
  { name: 'demo', under: 'demo/', rank: 1 },
];

/** Layers that no other layer may import: code the product must run without. */
const OUTSIDE_PRODUCT = new Set(['demo']);

/** The one place the CLI may reach the MCP surface: `zot mcp`, loaded lazily. */
const CLI_TO_MCP_ENTRY = { from: 'surfaces/cli/main.ts', to: 'surfaces/mcp/run.ts' };

function layerOf(file: string): (typeof LAYERS)[number] | undefined {
  return LAYERS.find((l) => file.startsWith(l.under));
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|mts|cts)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

export interface Edge {
  from: string;
  specifier: string;
  kind: 'static' | 'dynamic' | 'require';
  line: number;
}

/** Every import edge of a TypeScript source text, comments left out. */
export function importEdges(from: string, text: string): Edge[] {
  const code = text
    .replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/(^|[^:])\/\/.*$/gm, '$1');
  const edges: Edge[] = [];
  const lineAt = (index: number) => code.slice(0, index).split('\n').length;
  const patterns: Array<[RegExp, Edge['kind']]> = [
    [/\b(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s*)?['"]([^'"]+)['"]/g, 'static'],
    [/\bimport\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g, 'dynamic'],
    [/\brequire\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g, 'require'],
    [
      /\b(?:builtin|requireHere|createRequire\([^)]*\))\s*(?:<[^>]*>)?\s*\(\s*['"`]([^'"`]+)['"`]/g,
      'require',
    ],
  ];
  for (const [pattern, kind] of patterns) {
    for (const match of code.matchAll(pattern)) {
      edges.push({ from, specifier: match[1] as string, kind, line: lineAt(match.index ?? 0) });
    }
  }
  return edges;
}

/** A dynamic specifier built from a variable (`import(path)`) cannot be checked: refuse it. */
function opaqueImports(from: string, text: string): string[] {
  const out: string[] = [];
  // Only in an expression position (after await, return, =, (, a comma, a colon or ?), so that
  // prose in a string ("the records to import (BibTeX)") is not taken for one.
  const dynamic = /(?:\bawait|\breturn|[=(,:?])\s*import\s*\(\s*([^'"`\s)][^)]*)\)/g;
  for (const match of text.matchAll(dynamic)) out.push(`${from}: import(${match[1]})`);
  return out;
}

const files = sourceFiles(SRC).map((path) => ({
  path,
  rel: relative(SRC, path).split('\\').join('/'),
  text: readFileSync(path, 'utf8'),
}));

function target(fromRel: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const resolved = relative(SRC, resolve(SRC, dirname(fromRel), specifier))
    .split('\\')
    .join('/');
  return resolved.replace(/\.js$/, '.ts');
}

/** The edges that go up a layer, sideways between layers, or into a layer outside the product. */
function wrongEdges(edges: Edge[]): string[] {
  const wrong: string[] = [];
  for (const edge of edges) {
    const to = target(edge.from, edge.specifier);
    if (to === undefined) continue;
    const a = layerOf(edge.from);
    const b = layerOf(to);
    if (!a || !b) {
      wrong.push(`${edge.from}:${edge.line} → ${edge.specifier} (outside src/)`);
      continue;
    }
    const lazyMcpEntry =
      edge.from === CLI_TO_MCP_ENTRY.from && to === CLI_TO_MCP_ENTRY.to && edge.kind === 'dynamic';
    if (
      b.rank > a.rank ||
      (b.rank === a.rank && a.name !== b.name && !lazyMcpEntry) ||
      (OUTSIDE_PRODUCT.has(b.name) && a.name !== b.name)
    ) {
      wrong.push(`${edge.from}:${edge.line} (${a.name}) → ${to} (${b.name}) [${edge.kind}]`);
    }
  }
  return wrong;
}

describe('layers', () => {
  const edges = files.flatMap((f) => importEdges(f.rel, f.text));

  it('finds the edges it checks (static, import(), require) in the tree', () => {
    expect(edges.filter((e) => e.kind === 'static').length).toBeGreaterThan(300);
    expect(edges.filter((e) => e.kind === 'dynamic').length).toBeGreaterThan(20);
  });

  it('every file lives in a known layer', () => {
    expect(files.filter((f) => !layerOf(f.rel)).map((f) => f.rel)).toEqual([]);
  });

  it('no import goes up a layer or sideways between surfaces, statically or lazily', () => {
    expect(wrongEdges(edges)).toEqual([]);
  });

  it('demo code is outside the product: it uses core, and no product module imports it', () => {
    expect(
      edges.some((e) => e.from.startsWith('demo/') && target(e.from, e.specifier)?.startsWith('core/')),
    ).toBe(true);
    // Every product layer into demo/ is wrong; demo/ out to anything but core is wrong too.
    const into: Array<[string, string]> = [
      ['core/local/planted.ts', '../../demo/fixture/index.js'],
      ['render/planted.ts', '../demo/fixture/index.js'],
      ['tools/planted.ts', '../demo/sample/index.js'],
      ['prompts/planted.ts', '../demo/sample/index.js'],
      ['resources/planted.ts', '../demo/sample/index.js'],
      ['surfaces/mcp/planted.ts', '../../demo/sample/index.js'],
      ['surfaces/cli/planted.ts', '../../demo/sample/index.js'],
      ['bin/planted.ts', '../demo/sample/index.js'],
    ];
    const out: Array<[string, string]> = [
      ['demo/planted.ts', '../tools/index.js'],
      ['demo/planted.ts', '../render/save.js'],
    ];
    const fine: Array<[string, string]> = [
      ['demo/planted.ts', '../core/errors.js'],
      ['demo/sample/planted.ts', '../fixture/builder.js'],
    ];
    const asEdges = (pairs: Array<[string, string]>): Edge[] =>
      pairs.map(([from, specifier]) => ({ from, specifier, kind: 'static', line: 1 }));
    expect(wrongEdges(asEdges([...into, ...out, ...fine])).map((w) => w.split(':')[0])).toEqual(
      [...into, ...out].map(([from]) => from),
    );
  });

  it('only surfaces/mcp imports the MCP SDK', () => {
    const sdk = edges.filter((e) => e.specifier.startsWith('@modelcontextprotocol/'));
    expect(sdk.length).toBeGreaterThan(0);
    expect(sdk.filter((e) => !e.from.startsWith('surfaces/mcp/')).map((e) => `${e.from}:${e.line}`)).toEqual(
      [],
    );
  });

  it('no import() whose module cannot be read from the source', () => {
    // bin/zot loads the tool declarations the build-time manifest names (dist/tools/…): the
    // one computed import, from the top layer, of the layer below the surfaces.
    const allowed = new Set(['bin/zot.ts: import(url.href)']);
    expect(files.flatMap((f) => opaqueImports(f.rel, f.text)).filter((o) => !allowed.has(o))).toEqual([]);
  });

  it('the checker sees every kind of edge (a planted wrong edge of each kind is found)', () => {
    const planted = [
      "import { x } from '../surfaces/cli/main.js';",
      "const m = await import('../tools/index.js');",
      "const r = require('../bin/zot.js');",
      "export { y } from '../surfaces/mcp/server.js';",
    ].join('\n');
    const found = importEdges('core/planted.ts', planted).map((e) => [
      e.kind,
      target('core/planted.ts', e.specifier),
    ]);
    expect(found).toEqual([
      ['static', 'surfaces/cli/main.ts'],
      ['static', 'surfaces/mcp/server.ts'],
      ['dynamic', 'tools/index.ts'],
      ['require', 'bin/zot.ts'],
    ]);
  });
});
