/** Under ZOTEUS_READ_ONLY=true, help marks the commands that write as disabled. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runZot, sandbox } from '../../support/cli.js';

let box: ReturnType<typeof sandbox>;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());

const table = (extra: Record<string, string> = {}) => ({ ...box.env, ZOT_FORMAT: 'table', ...extra });

describe('help in read-only mode', () => {
  it('zot --help marks the write sections and their commands disabled, not the reads', async () => {
    const r = await runZot(['--help'], { env: table({ ZOTEUS_READ_ONLY: 'true' }) });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Write commands (MUTATES LIBRARY) [disabled: ZOTEUS_READ_ONLY=true]:');
    expect(r.stdout).toContain('Destructive commands (MUTATES LIBRARY) [disabled: ZOTEUS_READ_ONLY=true]:');
    expect(r.stdout).toMatch(/^ {2}collection create .*\[disabled: ZOTEUS_READ_ONLY=true\]$/m);
    expect(r.stdout).toMatch(/^ {2}whoami +[^[\n]*$/m);
    const normal = await runZot(['--help'], { env: table() });
    expect(normal.stdout).not.toContain('disabled');
  });

  it('a group and a write command say so too', async () => {
    const group = await runZot(['collection'], { env: table({ ZOTEUS_READ_ONLY: 'true' }) });
    expect(group.stdout).toMatch(
      /^ {2}collection create .*\[MUTATES LIBRARY; disabled: ZOTEUS_READ_ONLY=true\]$/m,
    );
    expect(group.stdout).toMatch(/^ {2}collection list +[^[\n]*$/m);
    const create = await runZot(['collection', 'create', '--help'], {
      env: table({ ZOTEUS_READ_ONLY: 'true' }),
    });
    expect(create.stdout).toContain('\nDisabled: read-only mode is on (ZOTEUS_READ_ONLY=true)');
  });
});
