/**
 * No tool reads a server path for a caller of a shared deployment: every declaration input
 * that names a file to read is listed in its `serverPaths` (checked against the inputs'
 * own descriptions), and each one is refused over MCP, for a caller confined to their folder,
 * with a validation_error naming the inline input to send instead, before anything is read or
 * sent, even for a path inside the caller's own folder. Locally the same input reads as ever.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStylePath } from '../../src/core/citations/styles.js';
import { confineToCaller } from '../../src/surfaces/mcp/server.js';
import { tools } from '../../src/tools/index.js';
import { connect } from '../surfaces/mcp/harness.js';

/** A call per path input: the tool, the input, a valid call that gives it a path. */
const CALLS: Record<string, Record<string, (path: string) => Record<string, unknown>>> = {
  zotero_attach_file: { path: (path) => ({ parent_item: 'ABCD2345', path: [path] }) },
  zotero_check_citations: { files: (path) => ({ files: [path] }) },
  zotero_format_bibliography: { style: (path) => ({ item_keys: ['ABCD2345'], style: path }) },
};

/** What each path input is told to send instead. */
const INSTEAD: Record<string, string> = {
  path: 'content_base64 with filename',
  files: 'text with kind',
  style: 'a style id (apa, ieee, …)',
};

/** Inputs whose descriptions speak of a path but that name a file to write (confined by save.ts). */
const WRITES = new Set(['save_path', 'write_bib']);

const meta = (r: CallToolResult) =>
  r._meta?.['zoteus/error'] as { code: string; message: string; field?: string; hint?: string } | undefined;

type Session = Awaited<ReturnType<typeof connect>>;
let shared: Session;
let local: Session;
let folder: string;

beforeAll(async () => {
  shared = await connect(tools);
  confineToCaller(shared.server, 'alice');
  local = await connect(tools);
});
afterAll(async () => {
  await shared.close();
  await local.close();
});

describe('inputs that read a path', () => {
  it('are exactly those the declarations list in serverPaths', () => {
    const declared = Object.fromEntries(
      tools.filter((t) => t.serverPaths).map((t) => [t.name, Object.keys(t.serverPaths ?? {}).sort()]),
    );
    expect(declared).toEqual(
      Object.fromEntries(Object.entries(CALLS).map(([t, c]) => [t, Object.keys(c).sort()])),
    );
    // Any other input whose description speaks of a path or .csl is one that writes.
    for (const tool of tools) {
      for (const [field, schema] of Object.entries(tool.input.shape)) {
        const text = (schema as { description?: string }).description ?? '';
        if (!/\bpaths?\b|\.csl/i.test(decodeURIComponent(text))) continue;
        if (tool.serverPaths?.[field] || WRITES.has(field)) continue;
        throw new Error(`${tool.name}.${field} speaks of a path but is neither in serverPaths nor a write`);
      }
    }
    // The style rule is styles.ts's own.
    const rule = tools.find((t) => t.name === 'zotero_format_bibliography')?.serverPaths?.style?.isPath;
    for (const spec of ['apa', 'ieee', 'my.csl', 'x/Style.XML', ' a.csl ', 'chicago-author-date'])
      expect(rule?.(spec), spec).toBe(isStylePath(spec));
  });

  const cases = Object.entries(CALLS).flatMap(([tool, fields]) =>
    Object.entries(fields).map(([field, call]) => [tool, field, call] as const),
  );

  it.each(cases)(
    '%s %s is refused on a shared deployment, inside the folder too',
    async (tool, field, call) => {
      const server = shared.server as unknown as { fileRoot?: string };
      folder = server.fileRoot ?? '';
      expect(folder).toContain(join('callers', ''));
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'mine.csl'), '<style/>');
      for (const path of ['/etc/passwd.csl', 'mine.csl', join(folder, 'mine.csl')]) {
        const r = (await shared.client.callTool({ name: tool, arguments: call(path) })) as CallToolResult;
        expect(r.isError, path).toBe(true);
        const error = meta(r);
        expect(error).toMatchObject({ code: 'validation_error', field });
        expect(error?.message).toBe(
          `${field} names a file on the server's own disk, which this shared server never reads for a caller: send the content inline instead, as ${INSTEAD[field]}.`,
        );
        expect(error?.hint).toBe(`Read the file on your side and pass it as ${INSTEAD[field]}.`);
      }
    },
  );

  it.each(cases)('%s %s is read as before when the server is not shared', async (tool, field, call) => {
    const r = (await local.client.callTool({
      name: tool,
      arguments: call('/nonexistent/zt.csl'),
    })) as CallToolResult;
    expect(meta(r)?.message ?? '').not.toContain('never reads for a caller');
    void field;
  });
});

describe('inputs the CLI reads from a file', () => {
  it('are content on MCP: a path string given for JSON content is refused by the schema, nothing read', async () => {
    const jsonFiles = tools.flatMap((t) =>
      (t.cli ?? []).flatMap((c) =>
        Object.entries(c.files ?? {})
          .filter(([, kind]) => kind === 'json')
          .map(([field]) => [t.name, field] as const),
      ),
    );
    expect(jsonFiles.map(([t, f]) => `${t}.${f}`)).toEqual(
      expect.arrayContaining(['zotero_evidence_table.rows', 'zotero_tag_audit.vocabulary']),
    );
    for (const [name, field] of jsonFiles) {
      const r = (await shared.client.callTool({
        name,
        arguments: { [field]: '/etc/passwd' },
      })) as CallToolResult;
      expect(r.isError, `${name}.${field}`).toBe(true);
      expect(meta(r)?.code, `${name}.${field}`).toBe('validation_error');
      expect(JSON.stringify(r)).not.toContain('root:x:0');
    }
  });
});
