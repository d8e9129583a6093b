#!/usr/bin/env node
// `zot` with the fixture tools added, run against the built dist/ like the real bin.
import { z } from 'zod';
import { ZoteusError } from '../../dist/core/errors.js';
import { runCli } from '../../dist/surfaces/cli/main.js';
import { groups, tools } from '../../dist/tools/index.js';
import { makeFixtureTools } from './fixture-tools.mjs';

process.exitCode = await runCli({
  argv: process.argv.slice(2),
  env: process.env,
  io: process,
  tools: [...tools, ...makeFixtureTools({ z, ZoteusError })],
  groups,
});
