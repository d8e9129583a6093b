/**
 * Judged by BibTeX and Biber (issue 17): the `.bib` that `zot export` writes, compiled in a real
 * LaTeX document that cites every exported key — BibTeX format with pdflatex, BibTeX and
 * natbib's plainnat; BibLaTeX format with Biber and biblatex, under pdflatex (Latin scripts) and
 * LuaLaTeX (every script). Every key must resolve (a `\bibitem` / `\entry` in the `.bbl`, no
 * "I didn't find a database entry", no undefined citation), and neither BibTeX, Biber nor LaTeX
 * may report an error. Skipped where TeX Live is not installed, never on CI.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../core/library/world.js';
import { zotAt } from '../surfaces/cli/terminal-harness.js';
import type { ItemSeed } from '../support/zotero-server/types.js';
import { ALL_ITEMS, GREEK_ITEM, LATIN_ITEMS, judgeAvailability, startJudgedLibrary } from './library.js';

const PROGRAMS = ['pdflatex', 'lualatex', 'bibtex', 'biber', 'kpsewhich'] as const;
const judge = judgeAvailability(PROGRAMS);
/** Four TeX runs and BibTeX or Biber, on a busy machine. */
const TIMEOUT = 180_000;
const SKIP = judge.skip
  ? ` (skipped: TeX Live is not installed here, missing ${judge.missing.join(', ')}; .ci/run installs it)`
  : '';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'zoteus-latex-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Exported {
  bib: string;
  keys: string[];
}

/** `zot export --all` of a library of `items` in `format`, as a user runs it. */
async function exportLibrary(items: ItemSeed[], format: 'bibtex' | 'biblatex'): Promise<Exported> {
  const world: World = await startJudgedLibrary(items);
  try {
    const r = await zotAt(['export', '--all', '--format', format, '--limit', '1000'], { env: world.env() });
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data as { text: string; keys: Array<{ citation_key: string }> };
    return { bib: data.text, keys: data.keys.map((k) => k.citation_key) };
  } finally {
    await world.close();
  }
}

interface Run {
  status: number | null;
  output: string;
}

function run(cwd: string, program: string, args: string[]): Run {
  const r = spawnSync(program, args, { cwd, encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw r.error;
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

interface Compiled {
  runs: Array<{ step: string } & Run>;
  log: string;
  blg: string;
  bbl: string;
}

/** latex, then BibTeX or Biber, then latex twice: the sequence every LaTeX user runs. */
function compile(
  name: string,
  tex: string,
  bib: string,
  engine: 'pdflatex' | 'lualatex',
  backend: 'bibtex' | 'biber',
): Compiled {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  writeFileSync(join(cwd, 'refs.bib'), bib);
  writeFileSync(join(cwd, 'paper.tex'), tex);
  const latex = () => run(cwd, engine, ['-interaction=nonstopmode', '-halt-on-error', 'paper.tex']);
  const runs: Compiled['runs'] = [{ step: engine, ...latex() }];
  runs.push({ step: backend, ...run(cwd, backend, ['paper']) });
  runs.push({ step: engine, ...latex() });
  runs.push({ step: engine, ...latex() });
  const read = (ext: string) => readFileSync(join(cwd, `paper.${ext}`), 'utf8');
  return { runs, log: read('log'), blg: read('blg'), bbl: read('bbl') };
}

const citeAll = (keys: string[]) => keys.map((k) => `\\cite{${k}}`).join(',\n');

function bibtexDocument(keys: string[]): string {
  return [
    '\\documentclass{article}',
    '\\usepackage[T1]{fontenc}',
    '\\usepackage[utf8]{inputenc}',
    '\\usepackage[numbers]{natbib}',
    '\\usepackage{url}',
    '\\begin{document}',
    citeAll(keys),
    '\\bibliographystyle{plainnat}',
    '\\bibliography{refs}',
    '\\end{document}',
    '',
  ].join('\n');
}

function biblatexDocument(keys: string[], engine: 'pdflatex' | 'lualatex'): string {
  return [
    '\\documentclass{article}',
    ...(engine === 'pdflatex'
      ? ['\\usepackage[T1]{fontenc}', '\\usepackage[utf8]{inputenc}']
      : ['\\usepackage{fontspec}']),
    '\\usepackage[backend=biber,style=authoryear]{biblatex}',
    '\\addbibresource{refs.bib}',
    '\\begin{document}',
    citeAll(keys),
    '\\printbibliography',
    '\\end{document}',
    '',
  ].join('\n');
}

/** What LaTeX's log says about citations that did not resolve, or a run still to do. */
function unresolved(log: string): string[] {
  return lines(
    log,
    /Citation .* undefined|undefined references|Empty bibliography|Please \(re\)run|Please rerun|Rerun to get/,
  );
}

/** LaTeX errors (lines starting "!"), and characters no font of the document had. */
const latexErrors = (log: string) => lines(log, /^!/);
const missingCharacters = (log: string) =>
  lines(log, /^Missing character: There is no/).map((l) => /There is no (.+?) \(U\+/u.exec(l)?.[1] ?? l);

function lines(text: string, pattern: RegExp): string[] {
  return text.split('\n').filter((line) => pattern.test(line));
}

/** biblatex's warnings, with TeX's line continuations "(biblatex) …" joined to their first line. */
function biblatexWarnings(log: string): string[] {
  return log
    .replace(/\n\(biblatex\)\s+/g, ' ')
    .split('\n')
    .filter((line) => line.startsWith('Package biblatex Warning'));
}

/** The keys a .bbl has an entry for: `\bibitem[…]{key}` (BibTeX) or `\entry{key}` (Biber). */
function bblKeys(bbl: string): string[] {
  const bibitem = [...bbl.matchAll(/\\bibitem\[(?:[^[\]]|\[[^\]]*\])*\]\{([^}]+)\}/g)].map((m) => m[1]);
  const entry = [...bbl.matchAll(/\\entry\{([^}]+)\}/g)].map((m) => m[1]);
  return [...bibitem, ...entry].filter((k): k is string => k !== undefined).sort();
}

const bibKeys = (bib: string) => [...bib.matchAll(/^@\w+\{([^,\s]+),$/gm)].map((m) => m[1] as string).sort();

/** biblatex's standard styles have no driver of their own for these data-model types: @misc's. */
const FALLBACK_TYPES = ['audio', 'jurisdiction', 'legislation', 'letter', 'movie'];
describe('judged by BibTeX and Biber', () => {
  it('the judges are installed where CI runs', () => {
    if (process.env.CI) expect(judge.missing, 'CI must install TeX Live and Biber (.ci/run)').toEqual([]);
    else expect(judge.skip).toBe(judge.missing.length > 0);
  });

  it.skipIf(judge.skip)(
    `BibTeX format: pdflatex, BibTeX and natbib's plainnat resolve every key${SKIP}`,
    async () => {
      const items = [...LATIN_ITEMS, GREEK_ITEM];
      const { bib, keys } = await exportLibrary(items, 'bibtex');
      expect(keys).toHaveLength(items.length);
      expect(new Set(keys).size).toBe(keys.length);
      expect(bibKeys(bib)).toEqual([...keys].sort());

      const out = compile('bibtex', bibtexDocument(keys), bib, 'pdflatex', 'bibtex');
      expect(out.runs.map((r) => `${r.step} ${r.status}`)).toEqual([
        'pdflatex 0',
        'bibtex 0',
        'pdflatex 0',
        'pdflatex 0',
      ]);
      expect(bblKeys(out.bbl)).toEqual([...keys].sort());
      expect(out.blg).not.toMatch(
        /I didn't find a database entry|error message|I was expecting|You're missing/,
      );
      // plainnat sorts by author, or by a `key` field, which Zotero's exporter never writes: a case
      // and a statute have neither. Nothing else.
      expect(lines(out.blg, /^Warning--/)).toEqual([
        expect.stringMatching(/^Warning--to sort, need author or key in noauthor_sea_2001$/),
        expect.stringMatching(/^Warning--to sort, need author or key in noauthor_coastal_1990$/),
      ]);
      expect(unresolved(out.log)).toEqual([]);
      expect(latexErrors(out.log)).toEqual([]);
      expect(missingCharacters(out.log)).toEqual([]);
    },
    TIMEOUT,
  );

  for (const [engine, items] of [
    ['pdflatex', LATIN_ITEMS],
    ['lualatex', ALL_ITEMS],
  ] as const) {
    const what = engine === 'pdflatex' ? 'Latin scripts' : 'Greek, Cyrillic and Chinese too';
    it.skipIf(judge.skip)(
      `BibLaTeX format (UTF-8): ${engine}, Biber and biblatex resolve every key, ${what}${SKIP}`,
      async () => {
        const { bib, keys } = await exportLibrary([...items], 'biblatex');
        expect(keys).toHaveLength(items.length);
        expect(new Set(keys).size).toBe(keys.length);
        expect(bibKeys(bib)).toEqual([...keys].sort());

        const out = compile(`biber-${engine}`, biblatexDocument(keys, engine), bib, engine, 'biber');
        expect(out.runs.map((r) => `${r.step} ${r.status}`)).toEqual([
          `${engine} 0`,
          'biber 0',
          `${engine} 0`,
          `${engine} 0`,
        ]);
        expect(lines(out.blg, /INFO - Found \d+ citekeys/)[0]).toMatch(
          new RegExp(`Found ${keys.length} citekeys`),
        );
        expect(bblKeys(out.bbl)).toEqual([...keys].sort());
        expect(lines(out.blg, /> (ERROR|WARN) - /)).toEqual([]);
        expect(out.blg).toMatch(/INFO - Output to paper\.bbl/);
        expect(unresolved(out.log)).toEqual([]);
        expect(latexErrors(out.log)).toEqual([]);
        expect(
          biblatexWarnings(out.log)
            .map((w) => w.replace(/ on input line \d+\.$/, ''))
            .sort(),
        ).toEqual(
          FALLBACK_TYPES.map(
            (t) => `Package biblatex Warning: No driver for '${t}'. Using fallback driver`,
          ).sort(),
        );
        // Every Latin letter has its glyph; only scripts Latin Modern lacks may be missing.
        const missing = missingCharacters(out.log);
        expect(
          missing.filter((c) => !/\p{Script=Greek}|\p{Script=Cyrillic}|\p{Script=Han}/u.test(c)),
        ).toEqual([]);
      },
      TIMEOUT,
    );
  }
});
