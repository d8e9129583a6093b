/**
 * The folder Zoteus is installed in (the one with its package.json), found by walking up from
 * the calling module. Paths to the package's own files (its data, `bin/zot`) start here, so
 * they hold whether the module runs from `dist/` or from the CLI's bundle (`dist/bundle/`,
 * where one chunk holds modules from many folders).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

export function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'zoteus')
          return (root = dir);
      } catch {
        // not ours: keep walking
      }
    }
    const up = dirname(dir);
    if (up === dir)
      throw new Error(
        'Cannot find the Zoteus package folder (no package.json named zoteus above this module).',
      );
    dir = up;
  }
}
