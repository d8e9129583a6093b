/**
 * Platform directories for Zoteus' own files (cache, config, data), following each
 * platform's convention: XDG on Linux, ~/Library on macOS, %LOCALAPPDATA%/%APPDATA% on Windows.
 *
 * Every function takes the platform as an argument (default: this machine's) and builds its
 * paths with that platform's `node:path` flavour, so a test on Linux can ask for the Windows
 * answer and get `C:\Users\me\AppData\…` with backslashes, as a Windows machine would.
 */
import { homedir } from 'node:os';
import { posix, win32, type PlatformPath } from 'node:path';

export type Env = Readonly<Record<string, string | undefined>>;

const APP = 'zoteus';

/**
 * The path functions of a platform. On this machine's own platform they are `node:path`
 * itself (`path.win32` on Windows, `path.posix` elsewhere).
 */
export function pathsOf(platform: NodeJS.Platform): PlatformPath {
  return platform === 'win32' ? win32 : posix;
}

/**
 * The user's home folder. On Windows USERPROFILE comes before HOME: Git Bash, MSYS and Cygwin
 * set HOME (at times to another folder than the profile), while Zotero and the platform's own
 * folders follow the profile.
 */
export function homeDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') {
    const drivePath = env.HOMEDRIVE && env.HOMEPATH ? `${env.HOMEDRIVE}${env.HOMEPATH}` : undefined;
    return env.USERPROFILE || drivePath || env.HOME || homedir();
  }
  return env.HOME || homedir();
}

/**
 * A folder named by an environment variable, when it is an absolute path. The XDG base
 * directory specification says a relative value is invalid and is to be ignored; the same
 * holds for APPDATA and LOCALAPPDATA, which are absolute whenever Windows sets them.
 */
function envDir(env: Env, name: string, path: PlatformPath): string | undefined {
  const value = env[name];
  return value && path.isAbsolute(value) ? value : undefined;
}

export function platformCacheDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  const path = pathsOf(platform);
  const home = homeDir(env, platform);
  if (platform === 'darwin') return path.join(home, 'Library', 'Caches', APP);
  if (platform === 'win32') return path.join(windowsLocalDir(env, path), APP, 'Cache');
  return path.join(envDir(env, 'XDG_CACHE_HOME', path) ?? path.join(home, '.cache'), APP);
}

export function platformConfigDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  const path = pathsOf(platform);
  const home = homeDir(env, platform);
  if (platform === 'darwin') return path.join(home, 'Library', 'Preferences', APP);
  if (platform === 'win32') return path.join(windowsRoamingDir(env, path), APP, 'Config');
  return path.join(envDir(env, 'XDG_CONFIG_HOME', path) ?? path.join(home, '.config'), APP);
}

export function platformDataDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  const path = pathsOf(platform);
  const home = homeDir(env, platform);
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', APP);
  if (platform === 'win32') return path.join(windowsLocalDir(env, path), APP, 'Data');
  return path.join(envDir(env, 'XDG_DATA_HOME', path) ?? path.join(home, '.local', 'share'), APP);
}

/** Zotero's default data directory: `~/Zotero` on macOS and Linux, `%USERPROFILE%\Zotero` on Windows. */
export function defaultZoteroDataDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  return pathsOf(platform).join(homeDir(env, platform), 'Zotero');
}

/** `%APPDATA%` (roaming application data), else `%USERPROFILE%\AppData\Roaming`. */
export function windowsRoamingDir(env: Env, path: PlatformPath = win32): string {
  return envDir(env, 'APPDATA', path) ?? path.join(homeDir(env, 'win32'), 'AppData', 'Roaming');
}

/** `%LOCALAPPDATA%` (this machine's application data), else `%USERPROFILE%\AppData\Local`. */
function windowsLocalDir(env: Env, path: PlatformPath): string {
  return envDir(env, 'LOCALAPPDATA', path) ?? path.join(homeDir(env, 'win32'), 'AppData', 'Local');
}
