/**
 * Platform directories for Zoteus' own files (cache, config, data), following each
 * platform's convention: XDG on Linux, ~/Library on macOS, %LOCALAPPDATA%/%APPDATA% on Windows.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

export type Env = Readonly<Record<string, string | undefined>>;

const APP = 'zoteus';

function home(env: Env): string {
  return env.HOME || env.USERPROFILE || homedir();
}

export function platformCacheDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return join(home(env), 'Library', 'Caches', APP);
  if (platform === 'win32')
    return join(env.LOCALAPPDATA || join(home(env), 'AppData', 'Local'), APP, 'Cache');
  return join(env.XDG_CACHE_HOME || join(home(env), '.cache'), APP);
}

export function platformConfigDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return join(home(env), 'Library', 'Preferences', APP);
  if (platform === 'win32') return join(env.APPDATA || join(home(env), 'AppData', 'Roaming'), APP, 'Config');
  return join(env.XDG_CONFIG_HOME || join(home(env), '.config'), APP);
}

export function platformDataDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return join(home(env), 'Library', 'Application Support', APP);
  if (platform === 'win32') return join(env.LOCALAPPDATA || join(home(env), 'AppData', 'Local'), APP, 'Data');
  return join(env.XDG_DATA_HOME || join(home(env), '.local', 'share'), APP);
}

export function defaultZoteroDataDir(env: Env): string {
  return join(home(env), 'Zotero');
}
