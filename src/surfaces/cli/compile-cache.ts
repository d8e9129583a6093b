/**
 * A V8 code cache for the bundled CLI (dist/bundle), which `bin/zot` installs before it loads
 * the bundle. Compiling the CLI's JavaScript is most of what a `zot read` costs beyond Node's
 * own start: with the bytecode of the last run read back from disk, the same command starts in
 * about two thirds of the time (bench/read.bench-run.ts measures both).
 *
 * - Node 22.1 and later: Node's own `module.enableCompileCache()` in the same folder.
 * - Node 20: the bundle is CommonJS, so each of its files is compiled here, through
 *   `vm.Script` with the cached data of the last run when there is one (except the few that
 *   `import()` an ES module, which Node compiles itself); after the command, files compiled
 *   without it get their cache written (atomically: parallel `zot` processes are the rule
 *   with agents). V8 checks that cached data fits the source and the V8 build,
 *   and compiles from scratch when it does not; a cache file is named after the bundle file's
 *   path, size and modification time, so a rebuilt bundle never meets an old cache, in a
 *   folder of its Node build and of the bundle's place on disk.
 *
 * The cache lives in `$ZOT_CACHE_DIR/v8` (the platform cache folder by default), made 0700,
 * and is used only while no one else may write to it; `ZOTEUS_COMPILE_CACHE=off` turns it off.
 * Nothing here may fail or hang a command: a cache that cannot be read or written, or a folder
 * that cannot be made (under a file, unwritable, on /proc), only leaves the command uncached.
 */
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { Script } from 'node:vm';
import { makeDirs } from '../../core/dirs.js';
import { platformCacheDir, type Env } from '../../core/paths.js';

/** A temporary file this old belongs to no write still running. */
const STALE_TMP_MS = 10 * 60_000;

interface CompilingModule {
  exports: unknown;
  require(id: string): unknown;
  _compile(content: string, filename: string, ...rest: unknown[]): unknown;
}

interface ModuleStatics {
  new (id: string, parent: CompilingModule): CompilingModule & { load(filename: string): void };
  _cache: Record<string, { exports: unknown } | undefined>;
}

/** A bundle file's require of another (`./x.js`, `../chunks/x.js`): rolldown writes no other kind. */
const BUNDLE_REQUEST = /^(?:\.\.?\/)+(?:[\w.~@-]+\/)*[\w.~@-]+\.js$/;

/**
 * `request` (a BUNDLE_REQUEST) from the folder `dir`, as a path: plain string work, not
 * node:path's (both are on every require of a command's path).
 */
function bundlePath(dir: string, request: string): string {
  const parts = dir.split(sep);
  for (const part of request.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '.') parts.push(part);
  }
  return parts.join(sep);
}

/**
 * A bundle file required by another, loaded as Node's `Module._load` loads it (one module
 * per file, in `Module._cache` under its path, which is a real path: the bundle is written
 * by the build, no link in it, below `root`, the real path of `bin/zot`'s folder) without
 * Node's resolution, which looks for the file (stat, real path, package.json scopes, exports)
 * again on each of the ~50 requires of a `zot read`: about a tenth of the command's own time.
 * A file that is not there goes to Node's `require`, for its error.
 */
function requireBundleFile(parent: CompilingModule, dir: string, request: string): unknown {
  const Mod = Module as unknown as ModuleStatics;
  const file = bundlePath(dir, request);
  const cached = Mod._cache[file];
  if (cached) return cached.exports;
  const child = new Mod(file, parent);
  Mod._cache[file] = child;
  let loaded = false;
  try {
    child.load(file);
    loaded = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || (error as { path?: string }).path !== file)
      throw error;
  } finally {
    if (!loaded) delete Mod._cache[file];
  }
  return loaded ? child.exports : parent.require(request);
}

/**
 * The `require` a CommonJS module is given: its own `module.require`, as Node's is (a
 * `createRequire` per file would build a module and its lookup paths again), with
 * `resolve`, `cache` and `main` as Node gives them; another file of the bundle is loaded
 * directly (requireBundleFile).
 */
function requireFor(module: CompilingModule, filename: string): NodeJS.Require {
  const dir = filename.slice(0, filename.lastIndexOf(sep));
  const require = ((id: string) =>
    BUNDLE_REQUEST.test(id) ? requireBundleFile(module, dir, id) : module.require(id)) as NodeJS.Require;
  let resolver: NodeJS.Require | undefined;
  const resolve = ((request: string, options?: { paths?: string[] }) =>
    (resolver ??= createRequire(filename)).resolve(request, options)) as NodeJS.RequireResolve;
  resolve.paths = (request: string) => (resolver ??= createRequire(filename)).resolve.paths(request);
  require.resolve = resolve;
  require.cache = (Module as unknown as { _cache: NodeJS.Require['cache'] })._cache;
  require.main = process.mainModule;
  return require;
}

/** Where the cache lives for this environment, or undefined when it is turned off. */
export function compileCacheDir(env: Env): string | undefined {
  if (env.ZOTEUS_COMPILE_CACHE === 'off') return undefined;
  return join(env.ZOT_CACHE_DIR || platformCacheDir(env), 'v8');
}

/** Caches the compiled code of every file under `root` (the bundle) from now on. */
export function installCompileCache(root: string, env: Env): void {
  const dir = compileCacheDir(env);
  if (dir === undefined || !ownedByUs(dir)) return;
  const native = (Module as unknown as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache;
  if (typeof native === 'function') {
    // The folder is made here, not by Node, which makes it recursively (see makeDirs).
    if (!makeDirs(dir)) return;
    try {
      native(dir);
    } catch {
      // no cache: slower, never wrong
    }
    return;
  }
  const bundle = resolve(root);
  // One folder per Node build and per installed bundle: two installs (two checkouts, say) have
  // the same file names, and each would take the other's caches for stale ones.
  hookCompile(bundle, join(dir, `${process.version}-${process.arch}`, pathHash(bundle)));
}

/**
 * Cached code runs as this user's code, so it is read only from a folder no one else can
 * write to: one that does not exist yet (it is made 0700), or one of this user's that neither
 * group nor others may write (POSIX; on Windows the profile's own folders are taken as private).
 */
function ownedByUs(dir: string): boolean {
  let stat;
  try {
    stat = statSync(dir);
  } catch {
    return true;
  }
  if (process.platform === 'win32') return true;
  return stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o022) === 0;
}

function hookCompile(root: string, dir: string): void {
  const proto = (Module as unknown as { prototype: CompilingModule }).prototype;
  const original = proto._compile;
  const fresh: Array<{ script: Script; file: string }> = [];

  proto._compile = function (this: CompilingModule, content: string, filename: string, ...rest: unknown[]) {
    // A file with an import() (of an ES-module package: pdf.js, or a built-in) is compiled by
    // Node: Node 20 lets a vm.Script import only with an experimental flag.
    if (!filename.startsWith(root + sep) || content.includes('import('))
      return original.call(this, content, filename, ...rest);
    const name = cacheName(root, filename);
    if (name === undefined) return original.call(this, content, filename, ...rest);
    const file = dir + sep + name;
    let cachedData: Buffer | undefined;
    try {
      cachedData = readFileSync(file);
    } catch {
      cachedData = undefined;
    }
    const script = new Script(wrap(content), { filename, ...(cachedData ? { cachedData } : {}) });
    if (cachedData === undefined || script.cachedDataRejected === true) fresh.push({ script, file });
    const fn = script.runInThisContext() as (...args: unknown[]) => unknown;
    return fn.call(this.exports, this.exports, requireFor(this, filename), this, filename, dirname(filename));
  };

  // After the command, once nothing is left to run: its lazily compiled functions are in the
  // cache too. Not on 'exit': V8 may still post compile and GC tasks for the isolate while
  // the process tears down, and making cache data then aborted a finished command (SIGABRT).
  // A process ended by process.exit() or a signal just writes no cache.
  process.once('beforeExit', () => {
    if (fresh.length === 0) return;
    if (!makeDirs(dir)) return;
    try {
      let n = 0;
      for (const { script, file } of fresh) {
        const tmp = `${file}.${process.pid}.${(n += 1)}.tmp`;
        writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
        renameSync(tmp, file);
      }
      // Caches of bundle files that are gone or were rebuilt since (chunk names change with
      // their content, so each build would otherwise leave its caches behind).
      // So are the temporary files of writes that never finished (a process killed mid-write).
      const now = Date.now();
      for (const name of readdirSync(dir)) {
        if (name.endsWith('.tmp')) {
          if (now - statSync(join(dir, name)).mtimeMs > STALE_TMP_MS)
            rmSync(join(dir, name), { force: true });
          continue;
        }
        if (!name.endsWith('.bin')) continue;
        const path = join(root, name.slice(0, name.lastIndexOf('@')).split('~').join(sep));
        if (cacheName(root, path) !== name) rmSync(join(dir, name), { force: true });
      }
    } catch {
      // a read-only or full disk: the next run compiles again
    }
  });
}

/**
 * A bundle file's cache name: its path under the bundle (`/` as `~`), size and modification
 * time, so a rebuilt file never meets the cache of its earlier build; undefined when it is gone.
 */
function cacheName(root: string, filename: string): string | undefined {
  try {
    const stat = statSync(filename);
    // `filename` is under `root` (the hook's check): its path below, without node:path's work.
    const below = filename.startsWith(root + sep)
      ? filename.slice(root.length + 1)
      : relative(root, filename);
    return `${below.split(sep).join('~')}@${stat.size}-${Math.trunc(stat.mtimeMs)}.bin`;
  } catch {
    return undefined;
  }
}

/** 32-bit FNV-1a of a path, in hex: a folder name, not a secret (node:crypto costs 6 ms). */
function pathHash(path: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < path.length; i += 1) {
    h ^= path.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** CommonJS's module wrapper, on the source's first line so line numbers stay true. */
function wrap(content: string): string {
  return `(function (exports, require, module, __filename, __dirname) { ${content}\n});`;
}
