/**
 * Where the Zotero desktop app keeps its data (`zotero/desktop.md`, "Where the data is"):
 *
 * 1. `ZOTERO_DATA_DIR` (or the profile's `zotero_data_dir`) when set: it wins, found or not
 *    (a wrong explicit setting is reported, never silently replaced by a guess);
 * 2. a custom location chosen in Zotero's settings: `extensions.zotero.dataDir` in the Zotero
 *    profile's `prefs.js`, when `extensions.zotero.useDataDir` is true (as Zotero itself
 *    decides: the custom location wins over the default one);
 * 3. `~/Zotero`;
 * 4. a `dataDir` in prefs.js even without `useDataDir`, when it holds a database.
 *
 * `~` is `%USERPROFILE%` on Windows (`~/Zotero` is then `C:\Users\me\Zotero`). Profiles are
 * found through `profiles.ini` in `~/.zotero/zotero` (Linux), `~/Library/Application
 * Support/Zotero` (macOS) or `%APPDATA%\Zotero\Zotero` (Windows). Paths are built with the
 * platform's own `node:path` flavour (`path.win32` for 'win32'), so a test can ask for the
 * Windows answer on Linux. Nothing here throws for a missing directory: the answer says what
 * was looked at and why.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import nodePath, { type PlatformPath } from 'node:path';
import type { Config } from '../config.js';
import { ZoteusError } from '../errors.js';
import { homeDir, pathsOf, windowsRoamingDir, type Env } from '../paths.js';

export type DataDirSource = 'env' | 'profile' | 'zotero-prefs' | 'default';

export interface DataDirCandidate {
  path: string;
  source: DataDirSource;
  /** Whether `zotero.sqlite` is there. */
  found: boolean;
  note: string;
}

export interface DataDirDiscovery {
  /** The data directory to use; undefined when none was found. */
  dataDir: string | undefined;
  /** `<dataDir>/zotero.sqlite` when it exists. */
  database: string | undefined;
  source: DataDirSource | undefined;
  /** One sentence: where it was found and why there, or what was looked at. */
  reason: string;
  /** Every place considered, in order. */
  checked: DataDirCandidate[];
}

export interface DiscoverOptions {
  env: Env;
  /** When given, its `zoteroDataDir` is used if `sources.zoteroDataDir` says env or profile. */
  config?: Pick<Config, 'zoteroDataDir' | 'sources'>;
  /** Whose conventions to follow (folders, environment variables); default this machine's. */
  platform?: NodeJS.Platform;
  /**
   * The path functions to build paths with; default the platform's flavour. A test passes
   * `path.posix` with platform 'win32' to walk a Windows-shaped profile tree in a temp folder.
   */
  path?: PlatformPath;
}

const DB_FILE = 'zotero.sqlite';

function expandHome(raw: string, env: Env, platform: NodeJS.Platform, path: PlatformPath): string {
  if (raw === '~') return homeDir(env, platform);
  if (raw.startsWith('~/') || raw.startsWith('~\\')) return path.join(homeDir(env, platform), raw.slice(2));
  return raw;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The folder that holds the Zotero profiles (and profiles.ini) on this platform. */
export function zoteroProfilesRoot(
  env: Env,
  platform: NodeJS.Platform = process.platform,
  path: PlatformPath = pathsOf(platform),
): string {
  const home = homeDir(env, platform);
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'Zotero');
  if (platform === 'win32') return path.join(windowsRoamingDir(env, path), 'Zotero', 'Zotero');
  return path.join(home, '.zotero', 'zotero');
}

/**
 * The profile directories a `profiles.ini` names, the default one first (`[Install…]
 * Default=`, then `Default=1`), relative ones resolved against `root`; whether they exist is
 * not checked. `path` is the flavour `root` is written in (default this machine's).
 */
export function profilesIniDirs(ini: string, root: string, path: PlatformPath = nodePath): string[] {
  const sections: Array<{ name: string; values: Record<string, string> }> = [];
  for (const line of ini.split(/\r?\n/)) {
    const header = /^\s*\[(.+)\]\s*$/.exec(line);
    if (header) {
      sections.push({ name: header[1]!, values: {} });
      continue;
    }
    const kv = /^\s*([^=;#]+?)\s*=\s*(.*?)\s*$/.exec(line);
    if (kv && sections.length > 0) sections[sections.length - 1]!.values[kv[1]!] = kv[2]!;
  }
  const profilePath = (values: Record<string, string>): string | undefined => {
    const p = values.Path;
    if (!p) return undefined;
    return values.IsRelative === '0' || path.isAbsolute(p) ? p : path.resolve(root, p);
  };
  const dirs: string[] = [];
  const add = (dir: string | undefined) => {
    if (dir && !dirs.includes(dir)) dirs.push(dir);
  };
  for (const s of sections) {
    if (s.name.startsWith('Install') && s.values.Default) add(path.resolve(root, s.values.Default));
  }
  const profiles = sections.filter((s) => s.name.startsWith('Profile'));
  for (const s of profiles) if (s.values.Default === '1') add(profilePath(s.values));
  for (const s of profiles) add(profilePath(s.values));
  return dirs;
}

/**
 * Profile directories that exist: those `profiles.ini` names (default first), then any folder
 * with a `prefs.js` in `root` or `root/Profiles`. `path` is the flavour `root` is written in.
 */
export function zoteroProfileDirs(root: string, path: PlatformPath = nodePath): string[] {
  const { join } = path;
  const dirs: string[] = [];
  const add = (dir: string) => {
    if (!dirs.includes(dir) && existsSync(dir)) dirs.push(dir);
  };
  let ini = '';
  try {
    ini = readFileSync(join(root, 'profiles.ini'), 'utf8');
  } catch {
    // No profiles.ini: look for prefs.js below.
  }
  for (const dir of profilesIniDirs(ini, root, path)) add(dir);
  for (const base of [root, join(root, 'Profiles')]) {
    let names: string[] = [];
    try {
      names = readdirSync(base);
    } catch {
      continue;
    }
    for (const name of names.sort()) if (isFile(join(base, name, 'prefs.js'))) add(join(base, name));
  }
  return dirs;
}

/** The data-directory preferences of one `prefs.js`. */
export function readZoteroPrefs(prefsJs: string): { dataDir?: string; useDataDir?: boolean } {
  const out: { dataDir?: string; useDataDir?: boolean } = {};
  const pref = (name: string): string | undefined => {
    const re = new RegExp(
      `user_pref\\(\\s*"${name.replace(/\./g, '\\.')}"\\s*,\\s*("(?:[^"\\\\]|\\\\.)*"|true|false)\\s*\\)`,
    );
    return re.exec(prefsJs)?.[1];
  };
  const dir = pref('extensions.zotero.dataDir');
  if (dir !== undefined && dir.startsWith('"')) {
    try {
      out.dataDir = JSON.parse(dir) as string;
    } catch {
      out.dataDir = dir.slice(1, -1).replace(/\\(.)/g, '$1');
    }
  }
  const use = pref('extensions.zotero.useDataDir');
  if (use === 'true' || use === 'false') out.useDataDir = use === 'true';
  return out;
}

export function discoverZoteroDataDir(options: DiscoverOptions): DataDirDiscovery {
  const { env } = options;
  const platform = options.platform ?? process.platform;
  const path = options.path ?? pathsOf(platform);
  const { join } = path;
  const checked: DataDirCandidate[] = [];
  const consider = (raw: string, source: DataDirSource, note: string): DataDirCandidate => {
    let dir = path.resolve(expandHome(raw, env, platform, path));
    // A path to the database file itself is accepted too (any case: Windows names ignore it).
    if (/\.sqlite$/i.test(dir) && isFile(dir)) dir = path.dirname(dir);
    const candidate = { path: dir, source, found: isFile(join(dir, DB_FILE)), note };
    checked.push(candidate);
    return candidate;
  };
  const answer = (c: DataDirCandidate, reason: string): DataDirDiscovery => ({
    dataDir: c.path,
    database: c.found ? join(c.path, DB_FILE) : undefined,
    source: c.source,
    reason,
    checked,
  });

  // 1. Explicit setting.
  const configured = options.config?.sources.zoteroDataDir;
  const explicit =
    configured === 'env' || configured === 'profile'
      ? { value: options.config!.zoteroDataDir, source: configured }
      : env.ZOTERO_DATA_DIR && !options.config
        ? { value: env.ZOTERO_DATA_DIR, source: 'env' as const }
        : undefined;
  if (explicit) {
    const what = explicit.source === 'env' ? 'ZOTERO_DATA_DIR' : "the config profile's zotero_data_dir";
    const c = consider(explicit.value, explicit.source, `set by ${what}`);
    return answer(
      c,
      c.found ? `${c.path} (set by ${what}).` : `${what} is set to ${c.path}, which has no ${DB_FILE}.`,
    );
  }

  // 2–4. Zotero's own choice: prefs.js with useDataDir, else ~/Zotero, else any prefs.js dataDir.
  const root = zoteroProfilesRoot(env, platform, path);
  const prefs: Array<{ profile: string; dataDir: string; useDataDir: boolean }> = [];
  for (const profile of zoteroProfileDirs(root, path)) {
    let text: string;
    try {
      text = readFileSync(join(profile, 'prefs.js'), 'utf8');
    } catch {
      continue;
    }
    const p = readZoteroPrefs(text);
    if (p.dataDir) prefs.push({ profile, dataDir: p.dataDir, useDataDir: p.useDataDir === true });
  }
  for (const p of prefs.filter((x) => x.useDataDir)) {
    const c = consider(p.dataDir, 'zotero-prefs', `custom data directory in ${join(p.profile, 'prefs.js')}`);
    if (c.found)
      return answer(
        c,
        `${c.path} (the custom data directory set in Zotero's settings, ${join(p.profile, 'prefs.js')}).`,
      );
  }
  const dflt = consider(join(homeDir(env, platform), 'Zotero'), 'default', "Zotero's default location");
  if (dflt.found) return answer(dflt, `${dflt.path} (Zotero's default location).`);
  for (const p of prefs.filter((x) => !x.useDataDir)) {
    const c = consider(
      p.dataDir,
      'zotero-prefs',
      `dataDir in ${join(p.profile, 'prefs.js')} (useDataDir not set)`,
    );
    if (c.found) return answer(c, `${c.path} (the data directory named in ${join(p.profile, 'prefs.js')}).`);
  }
  const looked = checked.map((c) => c.path).join(', ');
  return {
    dataDir: undefined,
    database: undefined,
    source: undefined,
    reason: `No ${DB_FILE} found (looked in ${looked}${prefs.length === 0 ? `; no Zotero profile with a custom data directory under ${root}` : ''}).`,
    checked,
  };
}

/** The database path of a discovery, or a `not_found` error that says where it looked. */
export function requireZoteroDatabase(discovery: DataDirDiscovery): string {
  if (discovery.database) return discovery.database;
  throw new ZoteusError('not_found', `Zotero desktop data not found: ${discovery.reason}`, {
    hint: 'Set ZOTERO_DATA_DIR to the Zotero data directory (Zotero → Settings → Advanced → Files and Folders shows it), or ZOTEUS_LOCAL=off to use the Web API only.',
  });
}
