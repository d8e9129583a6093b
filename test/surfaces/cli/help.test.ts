/** Help on a TTY is text; piped, every stdout line is JSON (the schema node, or a usage error). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runZot, sandbox } from '../../support/cli.js';

let box: ReturnType<typeof sandbox>;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());

function everyLineIsJson(stdout: string): void {
  const lines = stdout.split('\n').filter((l) => l.length > 0);
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
}

describe('help with stdout piped', () => {
  it.each([[[]], [['--json']], [['collection']], [['collection', '--json']]])(
    'zot %j without a subcommand is a validation_error naming the subcommands',
    async (argv) => {
      const r = await runZot(argv, { env: box.env });
      expect(r.code).toBe(3);
      everyLineIsJson(r.stdout);
      const error = r.json().error as { code: string; message: string; hint: string };
      expect(error.code).toBe('validation_error');
      expect(error.message).toMatch(/^missing subcommand/);
      if (argv[0] === 'collection') {
        expect(error.hint).toContain('collection list');
        expect(error.hint).toContain('collection create');
      } else expect(error.hint).toContain('collection');
    },
  );

  it('zot --help and zot collection --help print the schema node as a success envelope', async () => {
    const root = await runZot(['--help'], { env: box.env });
    expect(root.code).toBe(0);
    everyLineIsJson(root.stdout);
    const rootData = root.json().data as { name: string; subcommands: Array<{ name: string }> };
    expect(rootData.name).toBe('zot');
    const group = await runZot(['collection', '--help'], { env: box.env });
    expect(group.code).toBe(0);
    everyLineIsJson(group.stdout);
    const data = group.json().data as { name: string; subcommands: Array<{ name: string }> };
    expect(data.name).toBe('collection');
    expect(data.subcommands.map((s) => s.name)).toContain('collection list');
    const schema = await runZot(['schema', 'collection'], { env: box.env });
    expect(group.json().data).toEqual(schema.json().data);
  });
});

describe('help on a TTY', () => {
  it('zot and zot collection print human help with exit 0', async () => {
    const root = await runZot([], { env: box.env, tty: true });
    expect(root.code).toBe(0);
    expect(root.stdout).toContain('Usage: zot <command>');
    const group = await runZot(['collection'], { env: box.env, tty: true });
    expect(group.code).toBe(0);
    expect(group.stdout).toContain('Commands:');
    expect(group.stdout).toContain('collection list');
  });
});
