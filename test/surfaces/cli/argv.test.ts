/** argv parsing against the command tree (in process, with fixture declarations). */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ZoteusError } from '../../../src/core/errors.js';
import { parseCommandLine } from '../../../src/surfaces/cli/argv.js';
import { buildTree } from '../../../src/surfaces/cli/tree.js';
import { tools } from '../../../src/tools/index.js';
// @ts-expect-error: a JS fixture module without types
import { makeFixtureTools } from '../../support/fixture-tools.mjs';

const root = buildTree([...tools, ...(makeFixtureTools({ z, ZoteusError }) as typeof tools)]);

describe('parseCommandLine', () => {
  it('finds the command, converts numbers and enums, and keeps control flags apart', () => {
    const p = parseCommandLine(root, [
      'fixture',
      'list',
      '--limit',
      '5',
      '--mode',
      'wide',
      '--stream',
      '--json',
    ]);
    expect(p.node.path).toEqual(['fixture', 'list']);
    expect(p.input).toEqual({ limit: 5, mode: 'wide' });
    expect(p.controls).toMatchObject({ stream: true, json: true, dry_run: false });
  });

  it('accepts global flags before the command and --flag=value', () => {
    const p = parseCommandLine(root, ['--profile', 'lab', 'fixture', 'list', '--limit=7']);
    expect(p.controls.profile).toBe('lab');
    expect(p.input).toEqual({ limit: 7 });
  });

  it('maps positionals, a variadic last one taking the rest', () => {
    expect(parseCommandLine(root, ['fixture', 'batch', 'a', 'b', 'c']).input).toEqual({
      entries: ['a', 'b', 'c'],
    });
    expect(parseCommandLine(root, ['fixture', 'write', 'hello', '--library-id', '9']).input).toEqual({
      text: 'hello',
      library_id: 9,
    });
  });

  it('takes the mutating control flags', () => {
    const p = parseCommandLine(root, [
      'fixture',
      'destroy',
      'ABCD2345',
      '-y',
      '--dry-run',
      '--idempotency-key',
      'k',
      '--no-interaction',
    ]);
    expect(p.controls).toMatchObject({
      yes: true,
      dry_run: true,
      idempotency_key: 'k',
      no_interaction: true,
    });
  });

  it('refuses mutating flags on read commands and read flags on mutating ones', () => {
    expect(() => parseCommandLine(root, ['whoami', '--dry-run'])).toThrow(/Unknown flag --dry-run/);
    expect(() => parseCommandLine(root, ['fixture', 'write', 'x', '--stream'])).toThrow(
      /Unknown flag --stream/,
    );
  });

  it('a negative number is the value of a valued flag; another word with a dash must use --flag=value', () => {
    expect(parseCommandLine(root, ['fixture', 'list', '--start', '-1']).input).toEqual({ start: -1 });
    expect(parseCommandLine(root, ['fixture', 'list', '--start=-1']).input).toEqual({ start: -1 });
    expect(() => parseCommandLine(root, ['fixture', 'list', '--start', '--json'])).toThrow(
      '--start needs a value.',
    );
  });

  it('numbers are decimal: 0x10 stays text for the schema to refuse', () => {
    expect(parseCommandLine(root, ['fixture', 'list', '--limit', '0x10']).input).toEqual({ limit: '0x10' });
    expect(parseCommandLine(root, ['fixture', 'list', '--limit', '2.5']).input).toEqual({ limit: 2.5 });
  });

  it('an unknown command or flag gets the closest ones', () => {
    expect(() => parseCommandLine(root, ['fixture', 'lst'])).toThrow(
      "Unknown command 'lst' for `zot fixture`: did you mean `zot fixture list`?",
    );
    expect(() => parseCommandLine(root, ['fixture', 'list', '--limt', '3'])).toThrow(
      'Unknown flag --limt for `zot fixture list`: did you mean --limit?',
    );
  });

  it('a group with an unknown subcommand names the known ones', () => {
    try {
      parseCommandLine(root, ['fixture', 'nope']);
      expect.unreachable();
    } catch (error) {
      expect((error as ZoteusError).message).toBe("Unknown command 'nope' for `zot fixture`.");
      expect((error as ZoteusError).hint).toContain('bad-output, batch, crash, destroy');
    }
  });
});

describe('a command spelled under a sibling path (CliCommand.via)', () => {
  const real = buildTree(tools);

  it('`zot note KEY --add TEXT` is `zot note add KEY TEXT`', () => {
    const p = parseCommandLine(real, ['note', 'ABCD2345', '--add', 'Read this first']);
    expect(p.node.path).toEqual(['note', 'add']);
    expect(p.node.tier).toBe('write');
    expect(p.input).toEqual({ parent_item: 'ABCD2345', text: 'Read this first' });
  });

  it('`--file F` selects it too, and without a trigger flag `zot note KEY` lists notes', () => {
    expect(parseCommandLine(real, ['note', 'ABCD2345', '--file', 'n.html']).input).toEqual({
      parent_item: 'ABCD2345',
      html: 'n.html',
    });
    const list = parseCommandLine(real, ['note', 'ABCD2345']);
    expect(list.node.path).toEqual(['note']);
    expect(list.node.tier).toBe('read');
  });
});
