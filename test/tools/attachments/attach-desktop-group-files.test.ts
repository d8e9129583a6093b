/**
 * A desktop group whose files this account may not edit (zotero.sqlite's
 * `libraries.filesEditable`): an attachment through the desktop is refused before anything is
 * written, instead of creating the attachment item and trashing it after the desktop's 403.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';

const LOCAL_KEY = 'L0calK3yAbCdEf1234567890abcdefgh';

it('refuses with permission_denied, naming the group, and sends no write', async () => {
  const { startDesktopWorld, GROUP_ID } = await import('../../core/library/router-world.js');
  const { sampleLibrarySpec, SAMPLE_KEYS } = await import('../../support/zotero-sqlite/index.js');
  const spec = sampleLibrarySpec();
  const desk = await startDesktopWorld({
    localApi: true,
    spec: {
      ...spec,
      libraries: spec.libraries.map((l) => (l.type === 'group' ? { ...l, filesEditable: false } : l)),
    },
  });
  try {
    const state = desk.server.serveLocalWrites();
    state.keys.set(LOCAL_KEY, { remember: true, appName: 'Zoteus' });
    const path = join(desk.box.dir, 'paper.pdf');
    writeFileSync(path, '%PDF-1.4\n%%EOF\n');
    desk.server.clearLog();
    const r = await zotAt(
      [
        'attach',
        SAMPLE_KEYS.group.items.groupArticle,
        '--file',
        path,
        '--library-id',
        String(GROUP_ID),
        '--json',
      ],
      { env: desk.env({ ZOTEUS_LOCAL_API_KEY: LOCAL_KEY, ZOTEUS_WRITES: 'desktop' }) },
    );
    const error = (r.json() as { error: { code: string; message: string } }).error;
    expect(r.code).toBe(2);
    expect(error.code).toBe('permission_denied');
    expect(error.message).toMatch(
      new RegExp(
        `^Zotero does not let this account edit the files of groups/${GROUP_ID} \\(.+\\): nothing was attached\\.$`,
      ),
    );
    expect(
      desk.server.log.filter((e) => e.method !== 'GET' && !(Array.isArray(e.body) && e.body.length === 0)),
    ).toEqual([]);
  } finally {
    await desk.close();
  }
});
