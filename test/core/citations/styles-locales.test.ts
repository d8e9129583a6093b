/**
 * Locale resolution (locales.ts): primary dialects, the cache through the loopback repository
 * (Debian's packaged official locales), the bundled locales offline, and locales that do not
 * exist.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listLocales, normalizeLocaleTag, resolveLocale } from '../../../src/core/citations/locales.js';
import { loadConfig } from '../../../src/core/config.js';
import { createDeps } from '../../../src/core/deps.js';
import { isZoteusError, type ZoteusError } from '../../../src/core/errors.js';
import { DEBIAN_LOCALES, startStyleServer, type StyleServer } from '../../support/style-server.js';

const NOWHERE = 'http://127.0.0.1:9';

let dir: string;
let server: StyleServer;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zoteus-locales-'));
  server = await startStyleServer();
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function deps(env: Record<string, string> = {}) {
  const full = {
    HOME: dir,
    ZOT_CONFIG_DIR: join(dir, 'config'),
    ZOT_CACHE_DIR: join(dir, 'cache'),
    ZOTERO_DATA_DIR: join(dir, 'Zotero'),
    ZOTEUS_STYLES_URL: server.stylesUrl,
    ZOTEUS_LOCALES_URL: server.localesUrl,
    ...env,
  };
  return createDeps({ config: loadConfig(full), env: full, version: '0.0.0-test', surface: 'cli' });
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

describe('locales', () => {
  it('a bare language is its primary dialect: de → de-DE, pt → pt-PT', async () => {
    // de-DE ships with Zoteus: no request; pt-PT does not: downloaded.
    const de = await resolveLocale(deps(), 'de');
    expect(de).toMatchObject({ tag: 'de-DE', source: 'bundled' });
    const pt = await resolveLocale(deps(), 'pt');
    expect(pt).toMatchObject({ tag: 'pt-PT', source: 'download' });
    expect(pt.xml).toBe(readFileSync(join(DEBIAN_LOCALES, 'locales-pt-PT.xml'), 'utf8'));
    expect(server.log.map((r) => r.path)).toEqual(['/locales/locales-pt-PT.xml']);
  });

  it('downloads once into $ZOT_CACHE_DIR/csl/locales, then reads the cache', async () => {
    expect((await resolveLocale(deps(), 'de_at')).tag).toBe('de-AT');
    const again = await resolveLocale(deps(), 'de-AT');
    expect(again).toMatchObject({
      tag: 'de-AT',
      source: 'cache',
      file: join(dir, 'cache', 'csl', 'locales', 'locales-de-AT.xml'),
    });
    expect(server.log).toHaveLength(1);
    expect(readdirSync(join(dir, 'cache', 'csl', 'locales'))).toEqual(['locales-de-AT.xml']);
  });

  it('offline, the bundled locales answer (en-US, de-DE, fr-FR, es-ES, nl-NL)', async () => {
    const d = deps({ ZOTEUS_LOCALES_URL: NOWHERE });
    for (const tag of ['en-US', 'de', 'fr-FR', 'es', 'nl-NL'])
      expect((await resolveLocale(d, tag)).source, tag).toBe('bundled');
    expect(await listLocales(d)).toEqual([
      { tag: 'de-DE', source: 'bundled' },
      { tag: 'en-US', source: 'bundled' },
      { tag: 'es-ES', source: 'bundled' },
      { tag: 'fr-FR', source: 'bundled' },
      { tag: 'nl-NL', source: 'bundled' },
    ]);
  });

  it('a locale that does not exist is a validation_error listing those that do', async () => {
    const error = await failure(resolveLocale(deps(), 'xx-YY'));
    expect(error.code).toBe('validation_error');
    expect(error.field).toBe('locale');
    expect(error.message).toBe(
      `There is no CSL locale "xx-YY": the CSL locales repository (${server.localesUrl}) has no locales-xx-YY.xml.`,
    );
    expect(error.hint).toMatch(
      /^Locales that exist: af-ZA, ar, bg-BG, ca-AD, cs-CZ, .*, de-AT, de-CH, de-DE, .*, zh-CN, zh-TW\.$/,
    );
    // A near miss gets its "did you mean".
    const near = await failure(resolveLocale(deps(), 'en-UK'));
    expect(near.message).toBe(
      `There is no CSL locale "en-UK": the CSL locales repository (${server.localesUrl}) has no locales-en-UK.xml; did you mean 'en-US'?`,
    );
  });

  it('offline, an existing locale that is not available is the network’s error; an unknown one is still validation', async () => {
    const d = deps({ ZOTEUS_LOCALES_URL: NOWHERE });
    const missing = await failure(resolveLocale(d, 'pt-BR'));
    expect(missing.code).toBe('network_error');
    expect(missing.message).toBe(
      'The CSL locale pt-BR is not available offline, and the locales repository could not be reached: Could not reach the CSL locales repository (http://127.0.0.1:9): bad port.',
    );
    expect(missing.hint).toBe(
      'Check the network (and ZOTEUS_LOCALES_URL), then retry; available offline: de-DE, en-US, es-ES, fr-FR, nl-NL.',
    );
    expect((await failure(resolveLocale(d, 'qq'))).code).toBe('validation_error');
  });

  it('a tag that is no locale tag is refused before any request', async () => {
    for (const bad of ['german!', '../en-US', 'en-US.xml', '']) {
      const error = await failure(resolveLocale(deps(), bad));
      expect(error.code, bad).toBe('validation_error');
    }
    expect(normalizeLocaleTag('ZH_hant')).toBe('zh-Hant');
    expect(server.log).toEqual([]);
  });
});
