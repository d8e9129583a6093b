/**
 * `zotero_styles` / `zot styles [--q TEXT]`: the styles available offline (installed in a temp
 * Zotero data directory from Debian's packaged styles, cached, bundled), through the CLI in
 * process and over MCP; no key, no network.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tools } from '../../src/tools/index.js';
import { zotAt } from '../surfaces/cli/terminal-harness.js';
import { connect } from '../surfaces/mcp/harness.js';
import { debianStyle, startStyleServer, type StyleServer } from '../support/style-server.js';

let dir: string;
let server: StyleServer;
let env: Record<string, string>;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zoteus-styles-tool-'));
  server = await startStyleServer();
  const styles = join(dir, 'Zotero', 'styles');
  mkdirSync(styles, { recursive: true });
  copyFileSync(debianStyle('ieee')!, join(styles, 'ieee.csl'));
  copyFileSync(debianStyle('ains')!, join(styles, 'ains.csl'));
  copyFileSync(debianStyle('chicago-note-bibliography')!, join(styles, 'chicago-note-bibliography.csl'));
  env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    ZOT_CONFIG_DIR: join(dir, 'config'),
    ZOT_CACHE_DIR: join(dir, 'cache'),
    ZOTEUS_DATA_DIR: join(dir, 'data'),
    ZOTERO_DATA_DIR: join(dir, 'Zotero'),
    ZOTERO_API_URL: 'http://127.0.0.1:9',
    ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9/api',
    ZOTEUS_STYLES_URL: server.stylesUrl,
    ZOTEUS_LOCALES_URL: server.localesUrl,
    NO_COLOR: '1',
  };
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const IDS = ['ains', 'apa', 'chicago-note-bibliography', 'harvard-cite-them-right', 'ieee', 'vancouver'];

describe('zot styles', () => {
  it('lists installed and bundled styles with their source, without a key or the network', async () => {
    const r = await zotAt(['styles', '--json'], { env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = r.json() as { ok: boolean; data: Record<string, unknown> };
    expect(out.ok).toBe(true);
    const data = out.data as {
      styles: Array<Record<string, unknown>>;
      totalResults: number;
      start: number;
      nextStart?: number;
      defaultStyle: string;
      repository: string;
      locales: Array<{ tag: string; source: string }>;
    };
    expect(data.styles.map((s) => s.id)).toEqual(IDS);
    expect(data.styles.find((s) => s.id === 'ains')).toEqual({
      id: 'ains',
      title: 'AINS',
      source: 'installed',
      dependent: true,
      parent: 'thieme-german',
      class: 'in-text',
      citationFormat: 'numeric',
      defaultLocale: 'de-DE',
    });
    expect(data.styles.find((s) => s.id === 'chicago-note-bibliography')).toMatchObject({
      source: 'installed',
      class: 'note',
      dependent: false,
    });
    expect(data.styles.find((s) => s.id === 'apa')).toMatchObject({ source: 'bundled', class: 'in-text' });
    expect(data).toMatchObject({
      totalResults: 6,
      start: 0,
      defaultStyle: 'apa',
      repository: server.stylesUrl,
    });
    expect(data.nextStart).toBeUndefined();
    expect(data.locales.map((l) => l.tag)).toEqual(['de-DE', 'en-US', 'es-ES', 'fr-FR', 'nl-NL']);
    expect(server.log).toEqual([]);
  });

  it('--q finds styles by every word of id or title, accents and case aside; --limit pages', async () => {
    const q = await zotAt(['styles', '--q', 'CHICAGO (Note)', '--json'], { env });
    expect(q.code).toBe(0);
    const found = (q.json() as { data: { styles: Array<{ id: string }>; totalResults: number } }).data;
    expect(found.styles.map((s) => s.id)).toEqual(['chicago-note-bibliography']);
    const accented = await zotAt(['styles', '--q', 'ÍÉÉE', '--json'], { env });
    expect(
      (accented.json() as { data: { styles: Array<{ id: string }> } }).data.styles.map((s) => s.id),
    ).toEqual(['ieee']);
    const none = await zotAt(['styles', '--q', 'nothing like this'], { env, stdoutTTY: true });
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('No styles matching "nothing like this".');
    const page = await zotAt(['styles', '--limit', '2', '--start', '1', '--json'], { env });
    const data = (page.json() as { data: { styles: Array<{ id: string }>; nextStart?: number } }).data;
    expect(data.styles.map((s) => s.id)).toEqual(IDS.slice(1, 3));
    expect(data.nextStart).toBe(3);
  });

  it('a style downloaded once is listed from the cache afterwards', async () => {
    const { resolveStyle } = await import('../../src/core/citations/styles.js');
    const { createDeps } = await import('../../src/core/deps.js');
    const { loadConfig } = await import('../../src/core/config.js');
    await resolveStyle(createDeps({ config: loadConfig(env), env, version: 't', surface: 'cli' }), 'nature');
    const r = await zotAt(['styles', '--q', 'nature', '--json'], { env });
    const data = (r.json() as { data: { styles: Array<{ id: string; source: string }> } }).data;
    expect(data.styles).toEqual([
      expect.objectContaining({ id: 'nature', source: 'cache', title: 'Nature' }),
    ]);
  });

  it('prints a table a person reads', async () => {
    const r = await zotAt(['styles', '--q', 'ains'], { env, stdoutTTY: true });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Showing 1–1 of 1 style matching "ains".');
    expect(r.stdout).toContain(`${'ains'.padEnd(40)} installed AINS  (→ thieme-german)`);
    expect(r.stdout).toContain('Default style: apa. Locales offline: de-DE, en-US, es-ES, fr-FR, nl-NL.');
  });
});

describe('zotero_styles over MCP', () => {
  it('is a read-only, closed-world tool that answers with the same listing', async () => {
    const mcp = await connect(tools, {
      ZOTERO_DATA_DIR: env.ZOTERO_DATA_DIR as string,
      ZOTEUS_STYLES_URL: server.stylesUrl,
      ZOTEUS_READ_ONLY: 'true',
    });
    try {
      const listed = (await mcp.client.listTools()).tools.find((t) => t.name === 'zotero_styles');
      expect(listed?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      const r = (await mcp.client.callTool({
        name: 'zotero_styles',
        arguments: { q: 'ieee' },
      })) as CallToolResult;
      expect(r.isError).toBeFalsy();
      expect((r.structuredContent as { styles: Array<{ id: string; source: string }> }).styles).toEqual([
        expect.objectContaining({ id: 'ieee', source: 'installed', title: 'IEEE' }),
      ]);
      expect((r.content[0] as { text: string }).text).toMatch(/^Showing 1–1 of 1 style matching "ieee"\./);
    } finally {
      await mcp.close();
    }
  });
});
