/**
 * A tool module of dist/ by its URL, for the ES-module start (no bundle). Its own module:
 * the CommonJS bundle requires its tool modules, and a bundle file with an `import()` in it
 * is compiled by Node, outside the code cache, and loads Node's ES-module loader.
 */
export function importTool(href: string): Promise<unknown> {
  return import(href);
}
