/**
 * Settings for a `zot` process, which runs one command and exits (bin/zot applies them; the
 * MCP server, which lives long, does not).
 *
 * zod's compiled fast path: a CLI process checks each schema once or twice, and generating
 * the fast path costs more than it saves (5-8 ms for one output). A named import, so the
 * bundle keeps only what it uses of zod (a namespace import from here would keep all of it).
 */
import { config } from 'zod';

export function configureOneShotProcess(): void {
  config({ jitless: true });
}
