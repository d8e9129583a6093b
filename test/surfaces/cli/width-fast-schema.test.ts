/**
 * `zot schema` from the build-time manifest (the path a real `bin/zot schema` takes) fits the
 * terminal as the full CLI does: COLUMNS, else the terminal's width; piped, nothing is fitted.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_VERSION } from '../../../src/core/version.js';
import { fastSchema } from '../../../src/surfaces/cli/fast-schema.js';

class Sink extends Writable {
  text = '';
  isTTY?: boolean;
  columns?: number;
  override _write(chunk: unknown, _encoding: BufferEncoding, done: () => void): void {
    this.text += String(chunk);
    done();
  }
}

const HELP =
  'Only collections whose name contains this text (case-insensitive), searched over the whole library, not one page.';
const node = (name: string, params: unknown[] = [], subcommands: unknown[] = []) => ({
  name,
  help: `The ${name} command.`,
  since: '0.1.0',
  deprecated: false,
  params,
  subcommands,
});
const param = { name: 'q', kind: 'option', type: 'string', required: false, flags: ['--q'], help: HELP };

let dir: string;
let manifest: URL;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'zot-manifest-'));
  const path = join(dir, 'cli-manifest.json');
  const schema = node('zot', [], [node('collection', [], [node('collection list', [param])])]);
  writeFileSync(
    path,
    JSON.stringify({ cli_version: CLI_VERSION, schema, modules: {}, params: {}, commands: {}, groups: {} }),
  );
  manifest = pathToFileURL(path);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function run(env: Record<string, string>, tty: boolean) {
  const stdout = new Sink();
  const stderr = new Sink();
  if (tty) {
    stdout.isTTY = true;
    stdout.columns = 60;
  }
  const code = fastSchema(
    ['collection', 'list'],
    { NO_COLOR: '1', ...env },
    { stdout, stderr, stdin: process.stdin },
    manifest,
  );
  return { code, stdout: stdout.text };
}

describe('zot schema from the manifest', () => {
  it('at a 60-column terminal: every line fits, the help wrapped whole', () => {
    const r = run({ HOME: dir, ZOT_CONFIG_DIR: join(dir, 'config') }, true);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      'name        collection list',
      'help        The collection list command.',
      'since       0.1.0',
      'deprecated  false',
      'params',
      '  - name      q',
      '    kind      option',
      '    type      string',
      '    required  false',
      '    flags     --q',
      '    help      Only collections whose name contains this text',
      '              (case-insensitive), searched over the whole',
      '              library, not one page.',
      '',
    ]);
  });

  it('ZOT_FORMAT=table on a pipe without COLUMNS: one line per param, unfitted', () => {
    const r = run({ HOME: dir, ZOT_CONFIG_DIR: join(dir, 'config'), ZOT_FORMAT: 'table' }, false);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`  q     option  string  false     --q    ${HELP}\n`);
  });
});
