/** `next` suggestions only ever name commands that exist and parse. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ZoteusError } from '../../../src/core/errors.js';
import { checkSuggestion } from '../../../src/surfaces/cli/suggestions.js';
import { buildTree } from '../../../src/surfaces/cli/tree.js';
import { tools } from '../../../src/tools/index.js';
// @ts-expect-error: a JS fixture module without types
import { makeFixtureTools } from '../../support/fixture-tools.mjs';

const root = buildTree([...tools, ...(makeFixtureTools({ z, ZoteusError }) as typeof tools)]);

describe('checkSuggestion', () => {
  it.each([
    'zot whoami',
    'zot fixture list --limit 5',
    'zot fixture write "two words"',
    'zot schema fixture list',
  ])('accepts %s', (cmd) => {
    expect(checkSuggestion(root, cmd)).toBe(true);
  });

  it.each([
    'whoami',
    'zot frobnicate',
    'zot fixture list --nope',
    'zot fixture list --limit many',
    'zot fixture',
  ])('rejects %s', (cmd) => {
    expect(checkSuggestion(root, cmd)).toBe(false);
  });
});
