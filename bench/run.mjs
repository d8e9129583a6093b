#!/usr/bin/env node
// `npm run bench`: runs every bench/**/*.bench-run.ts with bench/vitest.config.ts and exits with its code.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const child = spawn(
  process.execPath,
  [vitest, 'run', '--config', join(root, 'bench', 'vitest.config.ts'), ...process.argv.slice(2)],
  { cwd: root, stdio: 'inherit' },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
