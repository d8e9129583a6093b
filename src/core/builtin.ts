/**
 * A Node built-in loaded when first needed. require(), because a dynamic import would start Node's
 * ES module loader inside the CommonJS bundle and keep its module out of the code cache
 * (surfaces/cli/compile-cache.ts); not a static import, which would load it with the module,
 * for every command. Each use says what the built-in costs a process.
 */
import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);

export function builtin<T>(name: `node:${string}`): T {
  return requireHere(name) as T;
}
