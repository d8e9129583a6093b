/**
 * Style resolution (styles.ts): installed styles in the Zotero data directory, the download
 * cache through a loopback repository (test/support/style-server.ts, serving Debian's packaged
 * official styles), the bundled copies when no repository answers, dependent styles, unknown
 * ids, and `.csl` paths. Every repository request is counted.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveStyle, listStyles, parseXml, XmlSyntaxError } from '../../../src/core/citations/styles.js';
import { loadConfig } from '../../../src/core/config.js';
import { createDeps } from '../../../src/core/deps.js';
import { isZoteusError, type ZoteusError } from '../../../src/core/errors.js';
import { debianStyle, startStyleServer, type StyleServer } from '../../support/style-server.js';

const NOWHERE = 'http://127.0.0.1:9';

let dir: string;
let server: StyleServer;
let warnings: string[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zoteus-styles-'));
  server = await startStyleServer();
  warnings = [];
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh process's deps (its own services), against the loopback repository unless told otherwise. */
function deps(env: Record<string, string> = {}, extra: { fileRoot?: string } = {}) {
  const full = {
    HOME: dir,
    ZOT_CONFIG_DIR: join(dir, 'config'),
    ZOT_CACHE_DIR: join(dir, 'cache'),
    ZOTEUS_DATA_DIR: join(dir, 'data'),
    ZOTERO_DATA_DIR: join(dir, 'Zotero'),
    ZOTEUS_STYLES_URL: server.stylesUrl,
    ZOTEUS_LOCALES_URL: server.localesUrl,
    ...env,
  };
  const d = createDeps({
    config: loadConfig(full),
    env: full,
    version: '0.0.0-test',
    surface: 'cli',
    writeLog: (line) => warnings.push(line),
  });
  return { ...d, ...extra };
}

async function failure(promise: Promise<unknown>): Promise<ZoteusError> {
  try {
    await promise;
  } catch (error) {
    if (isZoteusError(error)) return error;
    throw error;
  }
  throw new Error('expected a ZoteusError');
}

/** A loopback URL nothing listens on (a port just freed): connections are refused at once. */
async function closedPort(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

const debian = (id: string) => readFileSync(debianStyle(id)!, 'utf8');
const cacheFile = (id: string) => join(dir, 'cache', 'csl', 'styles', `${id}.csl`);

describe('the download cache', () => {
  it('downloads a style once into $ZOT_CACHE_DIR/csl/styles, then reads it offline', async () => {
    const first = await resolveStyle(deps(), 'chicago-author-date');
    expect(first).toMatchObject({
      id: 'chicago-author-date',
      uri: 'http://www.zotero.org/styles/chicago-author-date',
      source: 'download',
      file: cacheFile('chicago-author-date'),
      class: 'in-text',
    });
    expect(first.title).toMatch(/^Chicago Manual of Style/);
    expect(server.log).toEqual([{ method: 'GET', path: '/styles/chicago-author-date', status: 200 }]);
    // The cached bytes are the repository's, and no temporary file is left beside them.
    expect(readFileSync(cacheFile('chicago-author-date'), 'utf8')).toBe(debian('chicago-author-date'));
    expect(readdirSync(join(dir, 'cache', 'csl', 'styles'))).toEqual(['chicago-author-date.csl']);

    // A new process: the cache answers, the repository is not asked again.
    const second = await resolveStyle(deps(), 'chicago-author-date');
    expect(second.source).toBe('cache');
    expect(second.xml).toBe(first.xml);
    expect(server.log).toHaveLength(1);
    // Even with no repository at all.
    const offline = await resolveStyle(deps({ ZOTEUS_STYLES_URL: NOWHERE }), 'chicago-author-date');
    expect(offline.source).toBe('cache');
  });

  it('accepts the whole style URI for the id', async () => {
    const style = await resolveStyle(deps(), 'http://www.zotero.org/styles/ieee');
    expect(style).toMatchObject({ id: 'ieee', source: 'download' });
    expect(server.log.map((r) => r.path)).toEqual(['/styles/ieee']);
  });

  it('a broken cached file is set aside with a warning and downloaded again', async () => {
    mkdirSync(join(dir, 'cache', 'csl', 'styles'), { recursive: true });
    writeFileSync(cacheFile('ieee'), '<style xmlns="http://purl.org/net/xbiblio/csl"><info>');
    const style = await resolveStyle(deps(), 'ieee');
    expect(style.source).toBe('download');
    expect(warnings.join('\n')).toContain(
      `Skipping ${cacheFile('ieee')}: ${cacheFile('ieee')} is not valid XML`,
    );
    expect(readFileSync(cacheFile('ieee'), 'utf8')).toBe(debian('ieee'));
  });

  it('the default style is ZOTEUS_CITATION_STYLE, else apa', async () => {
    expect((await resolveStyle(deps({ ZOTEUS_CITATION_STYLE: 'nature' }))).id).toBe('nature');
    expect((await resolveStyle(deps({ ZOTEUS_STYLES_URL: NOWHERE }))).id).toBe('apa');
  });
});

describe('offline', () => {
  it('with no repository reachable, the bundled APA, Vancouver and Harvard still work', async () => {
    const d = deps({ ZOTEUS_STYLES_URL: `${await closedPort()}/styles` });
    const apa = await resolveStyle(d, 'apa');
    expect(apa).toMatchObject({ id: 'apa', source: 'bundled', class: 'in-text' });
    expect(apa.title).toBe('American Psychological Association 7th edition');
    expect(apa.file).toBeUndefined();
    expect((await resolveStyle(d, 'vancouver')).source).toBe('bundled');
    // The package names Harvard "harvard1"; its id is harvard-cite-them-right.
    expect(await resolveStyle(d, 'harvard1')).toMatchObject({
      id: 'harvard-cite-them-right',
      source: 'bundled',
    });
    expect(existsSync(join(dir, 'cache', 'csl'))).toBe(false);
  });

  it('a bundled style asks no repository: a failing (or silent) one costs nothing', async () => {
    server.fail(500);
    expect((await resolveStyle(deps(), 'apa')).source).toBe('bundled');
    expect(server.log).toEqual([]);
  });

  it('a style known nowhere offline is a network_error that says so when the repository is unreachable', async () => {
    const closed = await closedPort();
    const error = await failure(
      resolveStyle(deps({ ZOTEUS_STYLES_URL: `${closed}/styles` }), 'nature-chemistry'),
    );
    expect(error.code).toBe('network_error');
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(
      `The citation style "nature-chemistry" is not available offline, and the Zotero style repository could not be reached: Could not reach the Zotero style repository (${closed}): ECONNREFUSED. Did you mean 'nature'?`,
    );
    expect(error.hint).toContain('ZOTEUS_STYLES_URL');
  });

  it('offline, a typo of a known id is a validation_error with "did you mean"', async () => {
    const error = await failure(resolveStyle(deps({ ZOTEUS_STYLES_URL: NOWHERE }), 'vancover'));
    expect(error.code).toBe('validation_error');
    expect(error.message).toBe(
      `Unknown citation style "vancover": it is not available offline, and the Zotero style repository could not be reached (Could not reach the Zotero style repository (http://127.0.0.1:9): bad port); did you mean 'vancouver'?`,
    );
  });
});

describe('unknown ids', () => {
  it('a 404 from the repository is a validation_error with the closest ids', async () => {
    const error = await failure(resolveStyle(deps(), 'chicago-autor-date'));
    expect(error.code).toBe('validation_error');
    expect(error.field).toBe('style');
    expect(error.message).toBe(
      `Unknown citation style "chicago-autor-date": the Zotero style repository (${server.stylesUrl}) has no such style; did you mean 'chicago-author-date'?`,
    );
    expect(error.hint).toBe(
      '{{tool:zotero_styles}} lists the styles available offline; any id of the Zotero style repository works when it can be reached.',
    );
    expect(server.log).toEqual([{ method: 'GET', path: '/styles/chicago-autor-date', status: 404 }]);
  });

  it('an id with nothing close says only that the repository has no such style', async () => {
    const error = await failure(resolveStyle(deps(), 'zzqx'));
    expect(error.message).toBe(
      `Unknown citation style "zzqx": the Zotero style repository (${server.stylesUrl}) has no such style.`,
    );
  });

  it('ids are sanitised before anything is asked or written: no path traversal', async () => {
    for (const bad of ['../x', 'a/b', '..', 'x y', '%2e%2e', '']) {
      const error = await failure(resolveStyle(deps(), bad));
      expect(error.code, bad).toBe('validation_error');
    }
    expect((await failure(resolveStyle(deps(), '../x'))).message).toBe(
      '"../x" is neither a style id (letters, digits and hyphens, e.g. chicago-author-date, or http://www.zotero.org/styles/<id>) nor the path of a .csl file.',
    );
    expect(server.log).toEqual([]);
    expect(existsSync(join(dir, 'cache'))).toBe(false);
  });
});

describe('dependent styles', () => {
  it('a dependent style runs as its independent parent, keeping its own default-locale to force', async () => {
    const style = await resolveStyle(deps(), 'ains');
    expect(style).toMatchObject({
      id: 'ains',
      source: 'download',
      forceLocale: 'de-DE',
      parent: { id: 'thieme-german', source: 'download', file: cacheFile('thieme-german') },
    });
    expect(style.xml).toBe(debian('thieme-german'));
    expect(server.log.map((r) => r.path)).toEqual(['/styles/ains', '/styles/thieme-german']);
    // Both are cached: the next process asks nothing.
    const again = await resolveStyle(deps(), 'ains');
    expect(again.source).toBe('cache');
    expect(again.parent?.source).toBe('cache');
    expect(server.log).toHaveLength(2);
  });

  it('a dependent style whose parent exists nowhere is a validation_error naming both', async () => {
    const orphan = debian('ains').replace('styles/thieme-german', 'styles/no-such-parent-style');
    const path = join(dir, 'orphan.csl');
    writeFileSync(path, orphan);
    const error = await failure(resolveStyle(deps(), path));
    expect(error.code).toBe('validation_error');
    expect(error.message).toBe(
      `The style ains depends on http://www.zotero.org/styles/no-such-parent-style, which cannot be found: Unknown citation style "no-such-parent-style": the Zotero style repository (${server.stylesUrl}) has no such style.`,
    );
  });
});

describe('installed styles (the Zotero data directory)', () => {
  function install(files: Record<string, string>) {
    const styles = join(dir, 'Zotero', 'styles');
    mkdirSync(styles, { recursive: true });
    for (const [name, id] of Object.entries(files)) copyFileSync(debianStyle(id)!, join(styles, name));
    return styles;
  }

  it('finds a style in <dataDir>/styles by its file name or its <info><id>, without the network', async () => {
    const styles = install({ 'ieee.csl': 'ieee', 'my-mla.csl': 'modern-language-association' });
    const ieee = await resolveStyle(deps(), 'ieee');
    expect(ieee).toMatchObject({ id: 'ieee', source: 'installed', file: join(styles, 'ieee.csl') });
    const mla = await resolveStyle(deps(), 'modern-language-association');
    expect(mla).toMatchObject({ source: 'installed', file: join(styles, 'my-mla.csl') });
    expect(server.log).toEqual([]);
  });

  it('an installed dependent style finds its installed parent', async () => {
    install({ 'ains.csl': 'ains', 'thieme-german.csl': 'thieme-german' });
    const style = await resolveStyle(deps(), 'ains');
    expect(style).toMatchObject({
      source: 'installed',
      parent: { id: 'thieme-german', source: 'installed' },
    });
    expect(server.log).toEqual([]);
  });

  it('ZOTEUS_LOCAL=off leaves the desktop data alone', async () => {
    install({ 'ieee.csl': 'ieee' });
    expect((await resolveStyle(deps({ ZOTEUS_LOCAL: 'off' }), 'ieee')).source).toBe('download');
  });

  it('zotero_styles lists installed, cached and bundled styles once each, installed first', async () => {
    install({ 'ieee.csl': 'ieee', 'ains.csl': 'ains' });
    await resolveStyle(deps(), 'nature');
    const { styles } = await listStyles(deps());
    expect(styles.map((s) => [s.id, s.source])).toEqual([
      ['ains', 'installed'],
      ['apa', 'bundled'],
      ['harvard-cite-them-right', 'bundled'],
      ['ieee', 'installed'],
      ['nature', 'cache'],
      ['vancouver', 'bundled'],
    ]);
    expect(styles[0]).toEqual({
      id: 'ains',
      title: 'AINS',
      source: 'installed',
      dependent: true,
      parent: 'thieme-german',
      class: 'in-text',
      citationFormat: 'numeric',
      defaultLocale: 'de-DE',
    });
  });
});

describe('.csl paths', () => {
  it('reads a style file by path; one that does not exist is not_found', async () => {
    const path = join(dir, 'mine.csl');
    copyFileSync(debianStyle('ieee')!, path);
    expect(await resolveStyle(deps(), path)).toMatchObject({ id: 'ieee', source: 'path', file: path });
    const missing = await failure(resolveStyle(deps(), join(dir, 'missing.csl')));
    expect(missing.code).toBe('not_found');
    expect(missing.message).toBe(`No style file at ${join(dir, 'missing.csl')}.`);
    expect(server.log).toEqual([]);
  });

  it('invalid XML is a validation_error naming the file and the problem', async () => {
    const path = join(dir, 'broken.csl');
    writeFileSync(
      path,
      [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<style xmlns="http://purl.org/net/xbiblio/csl" class="in-text" version="1.0">',
        '  <info><title>Broken</info>',
        '</style>',
      ].join('\n'),
    );
    const error = await failure(resolveStyle(deps(), path));
    expect(error.code).toBe('validation_error');
    // Line 3, column 22: the "<" of "</info>", which does not close <title>.
    expect(error.message).toBe(
      `${path} is not valid XML: line 3, column 22: the closing tag </info> does not match <title> (opened at line 3).`,
    );
  });

  it('well-formed XML that is no CSL style is a validation_error saying what is missing', async () => {
    const cases: Array<[string, string]> = [
      ['<html><body/></html>', 'its root element is <html>, not <style>'],
      [
        '<style><info><id>x</id></info></style>',
        'its <style> is not in the CSL namespace (xmlns="http://purl.org/net/xbiblio/csl")',
      ],
      ['<style xmlns="http://purl.org/net/xbiblio/csl"><citation/></style>', 'it has no <info>'],
      [
        '<style xmlns="http://purl.org/net/xbiblio/csl"><info><title>T</title></info></style>',
        'its <info> has no <id>',
      ],
      [
        '<style xmlns="http://purl.org/net/xbiblio/csl" class="in-text"><info><id>x</id></info></style>',
        'it has neither a <citation> with a <layout> nor a <link rel="independent-parent"> to the style it depends on',
      ],
    ];
    for (const [xml, problem] of cases) {
      const path = join(dir, 'not-csl.csl');
      writeFileSync(path, xml);
      const error = await failure(resolveStyle(deps(), path));
      expect(error.code).toBe('validation_error');
      expect(error.message).toBe(`${path} is not a valid CSL style: ${problem}.`);
    }
  });

  // On a shared server a caller's .csl path is refused by the pipeline (test/tools/server-paths.test.ts).
});

describe('the XML checker', () => {
  const problem = (xml: string): string => {
    try {
      parseXml(xml);
    } catch (error) {
      if (error instanceof XmlSyntaxError) return error.message;
      throw error;
    }
    return 'well-formed';
  };

  it('accepts every packaged official style', () => {
    for (const id of ['apa', 'chicago-note-bibliography', 'ieee', 'nature', 'ains'])
      expect(problem(debian(id)), id).toBe('well-formed');
  });

  it('says where and what the first problem is', () => {
    expect(problem('<a>\n  <b x="1" x="2"/></a>')).toBe(
      'line 2, column 12: the attribute x appears twice in <b>',
    );
    expect(problem('<a>AT&T</a>')).toBe(
      'line 1, column 6: a "&" that starts no entity (write "&amp;" for the character)',
    );
    expect(problem('<a>&eacute;</a>')).toBe(
      'line 1, column 4: the entity "&eacute;" is not defined (XML knows &amp; &lt; &gt; &quot; &apos;)',
    );
    expect(problem('<a><b></a>')).toBe(
      'line 1, column 7: the closing tag </a> does not match <b> (opened at line 1)',
    );
    expect(problem('<a>\n<b>')).toBe('line 2, column 4: the file ends inside <b> (opened at line 2)');
    expect(problem('<a/><b/>')).toBe('line 1, column 5: a second root element <b> after </a>');
    expect(problem('<a x=1/>')).toBe('line 1, column 6: the value of the attribute x of <a> must be quoted');
    expect(problem('<!DOCTYPE a [<!ENTITY e "x">]><a/>')).toBe(
      'line 1, column 13: a DOCTYPE with an internal subset is not accepted',
    );
    expect(problem('\n\n<a>&#65;&#x42;&lt;</a>')).toBe('well-formed');
    expect(parseXml('<a>&#65;&#x42;&lt;<![CDATA[<&>]]></a>').text).toBe('AB<<&>');
  });
});
