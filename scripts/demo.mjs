#!/usr/bin/env node
/**
 * `npm run demo`: a short tour of `zot` that runs offline and without an API key, in a
 * throw-away home directory so nothing of the user's configuration is read or written.
 * Every command is the real binary, exactly as an agent would run it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const zot = fileURLToPath(new URL('../bin/zot', import.meta.url));
const home = mkdtempSync(join(tmpdir(), 'zoteus-demo-'));
const env = {
  PATH: process.env.PATH,
  HOME: home,
  ZOT_CONFIG_DIR: join(home, 'config'),
  ZOT_CACHE_DIR: join(home, 'cache'),
  ZOTEUS_DATA_DIR: join(home, 'data'),
  NO_COLOR: '1',
};

function run(title, args, { show = (env) => JSON.stringify(env, null, 2), stdin } = {}) {
  process.stdout.write(`\n=== ${title}\n$ zot ${args.map((a) => (/\s/.test(a) ? `'${a}'` : a)).join(' ')}\n`);
  const r = spawnSync(process.execPath, [zot, ...args], { env, encoding: 'utf8', input: stdin });
  const lines = r.stdout.trim().split('\n').filter(Boolean);
  for (const line of lines) process.stdout.write(`${show(JSON.parse(line))}\n`);
  process.stdout.write(`(exit ${r.status})\n`);
  if (r.status !== 0 && !title.includes('refused'))
    throw new Error(`zot ${args.join(' ')} failed: ${r.stderr}`);
  return r;
}

try {
  run('Every command, from `zot schema` (agents read this instead of --help)', ['schema'], {
    show: (envelope) => {
      const rows = [];
      const walk = (node) => {
        if (node.mcp_tool || node.subcommands.length === 0)
          rows.push(
            `  ${node.name.padEnd(22)} ${String(node.safety_tier).padEnd(12)} ${node.mcp_tool ?? ''}`,
          );
        for (const child of node.subcommands) walk(child);
      };
      envelope.data.subcommands.forEach(walk);
      return `  command                tier         MCP tool\n${rows.join('\n')}`;
    },
  });

  run('What this installation can reach (no key: no request is sent)', ['whoami']);

  run('A dry-run library write: the planned change, offline, no key needed', [
    'collection',
    'create',
    'Reading list',
    '--dry-run',
  ]);

  const rows = join(home, 'rows.json');
  writeFileSync(
    rows,
    JSON.stringify([
      {
        item_key: 'ABCD2345',
        study: 'Smith 2020',
        finding: 'Sea-level rise accelerated after 1990.',
        quotation: 'the rate of rise has roughly doubled since 1990',
        page: 4,
        page_exact: true,
        coverage: 'passage',
        support: 'supported',
      },
      {
        item_key: 'WXYZ6789',
        study: 'Lee 2021',
        finding: 'Regional variation dominates.',
        coverage: 'abstract-only',
        support: 'uncertain',
      },
    ]),
  );
  run('A dry-run file write: what would be saved, computed offline; nothing is written', [
    'evidence-table',
    '--question',
    'Has sea-level rise accelerated?',
    '--rows',
    rows,
    '--save',
    join(home, 'table.md'),
    '--dry-run',
  ]);

  run('Bad input is a typed error with a stable exit code (refused)', ['schema', 'collection', 'frobnicate']);
  process.stdout.write(
    '\nDone. Next: set ZOTERO_API_KEY and run `zot groups`, or add `zot mcp` to your MCP client.\n',
  );
} finally {
  rmSync(home, { recursive: true, force: true });
}
