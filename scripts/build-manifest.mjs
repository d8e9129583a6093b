#!/usr/bin/env node
/**
 * Writes dist/cli-manifest.json: the `zot schema` tree computed from the compiled tool
 * declarations, so `zot schema` can answer without loading zod and every tool module
 * (start-up budget: 3.5x `node -e 0`). It is derived, never edited: `npm run build`
 * rewrites it, and a test checks it equals the live tree.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildTree, schemaNode } from '../dist/surfaces/cli/tree.js';
import { tools } from '../dist/tools/index.js';
import { CLI_VERSION } from '../dist/core/version.js';

const out = fileURLToPath(new URL('../dist/cli-manifest.json', import.meta.url));
writeFileSync(out, `${JSON.stringify({ cli_version: CLI_VERSION, schema: schemaNode(buildTree(tools)) })}\n`);
