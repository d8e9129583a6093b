/**
 * One MCP server process over stdio (the built `zoteus`, as an agent's client starts it),
 * driven by the SDK's client: `calls` rounds of `tools/call`, each round every tool once (so
 * each tool's figure is taken among the others, as in an agent's session), after one unmeasured
 * round; p50/p99 per tool, and the server's memory from /proc/<pid>/status before and after.
 * A tool whose measured calls have taken more than `budgetMs` in all (after at least 20) is
 * called no more, so that one slow tool cannot hold a 250,000-item run for an hour: its row
 * says how many calls it got.
 */
import { existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { median, percentile } from '../support.js';

export interface McpCall {
  /** The row's name, e.g. `zotero_search_items "sea level"`. */
  what: string;
  tool: string;
  args: Record<string, unknown>;
}

export interface McpToolFigure {
  what: string;
  calls: number;
  p50: number;
  p99: number;
  max: number;
  note: string;
}

export interface McpMemory {
  /** VmRSS after the client connected and listed the tools, before any call (MB). */
  rssBeforeMb: number;
  /** VmRSS after the calls (MB). */
  rssAfterMb: number;
  /** VmHWM: the peak RSS of the server's whole life so far (MB). */
  hwmMb: number;
}

/** VmRSS and VmHWM of a process, in MB (NaN where /proc does not tell). */
function memoryOf(pid: number | null): { rss: number; hwm: number } {
  const file = `/proc/${pid}/status`;
  if (pid === null || !existsSync(file)) return { rss: NaN, hwm: NaN };
  const status = readFileSync(file, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

const textOf = (r: CallToolResult) =>
  r.content
    .map((c) => (c.type === 'text' ? c.text : ''))
    .join(' ')
    .slice(0, 200);

export async function mcpAtScale(
  server: string,
  env: Record<string, string>,
  cwd: string,
  calls: readonly McpCall[],
  rounds: number,
  budgetMs: number,
): Promise<{ tools: McpToolFigure[]; memory: McpMemory; stderr: string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [server],
    env,
    cwd,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    // Only the end matters when something fails; keep the buffer small over 1,000 calls.
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const client = new Client({ name: 'zoteus-scale-bench', version: '0.0.0' });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const listed = new Set(tools.map((t) => t.name));
    for (const c of calls) if (!listed.has(c.tool)) throw new Error(`the server lists no ${c.tool}`);
    const before = memoryOf(transport.pid);
    const times = new Map<string, number[]>(calls.map((c) => [c.what, []]));
    const notes = new Map<string, string>();
    for (let round = 0; round <= rounds; round++) {
      for (const c of calls) {
        const spent = times.get(c.what)!;
        if (spent.length >= 20 && spent.reduce((a, b) => a + b, 0) > budgetMs) continue;
        const t = performance.now();
        const r = (await client.callTool({ name: c.tool, arguments: c.args })) as CallToolResult;
        const ms = performance.now() - t;
        if (r.isError) throw new Error(`${c.what}: ${textOf(r)}`);
        if (round === 0) {
          const s = r.structuredContent as Record<string, unknown> | undefined;
          const total = s?.totalResults ?? (Array.isArray(s?.hits) ? s.hits.length : undefined);
          notes.set(c.what, total !== undefined ? `${String(total)} results` : '');
          continue;
        }
        times.get(c.what)!.push(ms);
      }
    }
    const after = memoryOf(transport.pid);
    return {
      tools: calls.map((c) => {
        const t = times.get(c.what)!;
        return {
          what: c.what,
          calls: t.length,
          p50: median(t),
          p99: percentile(t, 0.99),
          max: Math.max(...t),
          note: [
            notes.get(c.what) ?? '',
            t.length < rounds ? `stopped after ${t.length} calls (over ${budgetMs / 1000} s)` : '',
          ]
            .filter(Boolean)
            .join('; '),
        };
      }),
      memory: { rssBeforeMb: before.rss, rssAfterMb: after.rss, hwmMb: after.hwm },
      stderr,
    };
  } finally {
    await client.close();
  }
}
