/**
 * Field values for BibTeX and BibLaTeX, as Zotero's BibTeX and BibLaTeX export translators write
 * them (`zotero/citations.md`, "BibTeX / BibLaTeX"), in one pass per value:
 *
 * - Zotero's rich-text markup becomes LaTeX: `<i>` → `\textit{…}`, `<b>` → `\textbf{…}`,
 *   `<sup>`/`<sub>` → `\textsuperscript{…}`/`\textsubscript{…}`, small caps (`<sc>`, `<span
 *   style="font-variant:small-caps;">`) → `\textsc{…}`, `<span class="nocase">…</span>` → a
 *   braced, case-protected group. A tag without its partner is text.
 * - special characters: `# $ % & _` get a backslash; `\ | < > ~ ^` become text commands
 *   (`{\textbackslash}`, `{\textbar}`, …); a `{` or `}` becomes `\{` / `\}`, and one without its
 *   partner also gets a `\vphantom` of the missing one, so the field's braces stay balanced (the
 *   translators' trick; BibTeX counts `\{` as a brace).
 * - case protection (title fields): every word that has a capital letter is braced, except the
 *   field's first word when its only capital is its first letter ("The {DNA} of {Paris}").
 *   Words are runs of letters, marks and digits (any script), so acronyms and capitalised names
 *   keep their case when a BibTeX style lower-cases a title.
 * - charset `ascii`: every non-ASCII character that LaTeX can write in ASCII is written so:
 *   accented Latin letters as accent commands (`{\'e}`, `{\"u}`, `{\v c}`, `{\k a}`), the letters
 *   LaTeX names (`{\ss}`, `{\o}`, `{\l}`, `{\ae}`, `{\i}`…), Greek letters in math (`$\alpha$`),
 *   typographic punctuation and symbols as text commands (`{\textendash}`, `{\texteuro}`…). A
 *   character with no LaTeX spelling (Chinese, Cyrillic…) is kept, braced with its neighbours
 *   (`{中文}`), where Zotero's translator writes `?` and loses it. Charset `utf8` keeps every
 *   character as it is.
 */

export type Charset = 'utf8' | 'ascii';

export interface LatexOptions {
  charset: Charset;
  /** Brace words with capitals (title fields). Default false. */
  protectCase?: boolean;
}

/** Characters that are always escaped, and how. */
const SPECIAL: Readonly<Record<string, string>> = {
  '\\': '{\\textbackslash}',
  '|': '{\\textbar}',
  '<': '{\\textless}',
  '>': '{\\textgreater}',
  '~': '{\\textasciitilde}',
  '^': '{\\textasciicircum}',
  '#': '\\#',
  $: '\\$',
  '%': '\\%',
  '&': '\\&',
  _: '\\_',
};

/** Whether a text has a character `plain` escapes (SPECIAL's, and braces). */
const ESCAPED = /[\\|<>~^#$%&_{}]/;

const OPEN_BRACE = '\\{';
const CLOSE_BRACE = '\\}';
const LONE_OPEN_BRACE = '\\{\\vphantom{\\}}';
const LONE_CLOSE_BRACE = '\\vphantom{\\{}\\}';

/** Combining marks LaTeX writes as accent commands (the base letter follows). */
const ACCENTS: Readonly<Record<string, string>> = {
  '\u0300': '`',
  '\u0301': "'",
  '\u0302': '^',
  '\u0303': '~',
  '\u0304': '=',
  '\u0306': 'u',
  '\u0307': '.',
  '\u0308': '"',
  '\u030a': 'r',
  '\u030b': 'H',
  '\u030c': 'v',
  '\u0323': 'd',
  '\u0327': 'c',
  '\u0328': 'k',
  '\u0331': 'b',
};

/** Letters and symbols with a LaTeX name of their own. */
const NAMED: Readonly<Record<string, string>> = {
  ß: '{\\ss}',
  ẞ: '{\\SS}',
  æ: '{\\ae}',
  Æ: '{\\AE}',
  œ: '{\\oe}',
  Œ: '{\\OE}',
  ø: '{\\o}',
  Ø: '{\\O}',
  ł: '{\\l}',
  Ł: '{\\L}',
  ı: '{\\i}',
  ȷ: '{\\j}',
  đ: '{\\dj}',
  Đ: '{\\DJ}',
  ð: '{\\dh}',
  Ð: '{\\DH}',
  þ: '{\\th}',
  Þ: '{\\TH}',
  ŋ: '{\\ng}',
  Ŋ: '{\\NG}',
  ĳ: 'ij',
  Ĳ: 'IJ',
  '\u00a0': '~',
  '\u00ad': '\\-',
  '¡': '{\\textexclamdown}',
  '¿': '{\\textquestiondown}',
  '¢': '{\\textcent}',
  '£': '{\\textsterling}',
  '¥': '{\\textyen}',
  '€': '{\\texteuro}',
  '¦': '{\\textbrokenbar}',
  '§': '{\\textsection}',
  '¶': '{\\textparagraph}',
  '©': '{\\textcopyright}',
  '®': '{\\textregistered}',
  '™': '{\\texttrademark}',
  ª: '{\\textordfeminine}',
  º: '{\\textordmasculine}',
  '«': '{\\guillemotleft}',
  '»': '{\\guillemotright}',
  '‹': '{\\guilsinglleft}',
  '›': '{\\guilsinglright}',
  '¬': '{\\textlnot}',
  '°': '{\\textdegree}',
  '±': '{\\textpm}',
  '×': '{\\texttimes}',
  '÷': '{\\textdiv}',
  µ: '{\\textmu}',
  '·': '{\\textperiodcentered}',
  '¹': '{\\textonesuperior}',
  '²': '{\\texttwosuperior}',
  '³': '{\\textthreesuperior}',
  '¼': '{\\textonequarter}',
  '½': '{\\textonehalf}',
  '¾': '{\\textthreequarters}',
  '‐': '-',
  '‑': '-',
  '‒': '-',
  '–': '{\\textendash}',
  '—': '{\\textemdash}',
  '―': '{\\textemdash}',
  '‘': '{\\textquoteleft}',
  '’': '{\\textquoteright}',
  '‚': '{\\quotesinglbase}',
  '“': '{\\textquotedblleft}',
  '”': '{\\textquotedblright}',
  '„': '{\\quotedblbase}',
  '†': '{\\textdagger}',
  '‡': '{\\textdaggerdbl}',
  '•': '{\\textbullet}',
  '…': '{\\textellipsis}',
  '‰': '{\\textperthousand}',
  '′': "'",
  '″': "''",
  '−': '-',
  '∞': '$\\infty$',
  '←': '{\\textleftarrow}',
  '→': '{\\textrightarrow}',
  '↑': '{\\textuparrow}',
  '↓': '{\\textdownarrow}',
  '\u2002': ' ',
  '\u2003': ' ',
  '\u2009': ' ',
  '\u200a': ' ',
  '\u202f': ' ',
  Γ: '$\\Gamma$',
  Δ: '$\\Delta$',
  Θ: '$\\Theta$',
  Λ: '$\\Lambda$',
  Ξ: '$\\Xi$',
  Π: '$\\Pi$',
  Σ: '$\\Sigma$',
  Φ: '$\\Phi$',
  Ψ: '$\\Psi$',
  Ω: '$\\Omega$',
  α: '$\\alpha$',
  β: '$\\beta$',
  γ: '$\\gamma$',
  δ: '$\\delta$',
  ε: '$\\varepsilon$',
  ζ: '$\\zeta$',
  η: '$\\eta$',
  θ: '$\\theta$',
  ι: '$\\iota$',
  κ: '$\\kappa$',
  λ: '$\\lambda$',
  μ: '$\\mu$',
  ν: '$\\nu$',
  ξ: '$\\xi$',
  π: '$\\pi$',
  ρ: '$\\rho$',
  ς: '$\\varsigma$',
  σ: '$\\sigma$',
  τ: '$\\tau$',
  υ: '$\\upsilon$',
  φ: '$\\varphi$',
  χ: '$\\chi$',
  ψ: '$\\psi$',
  ω: '$\\omega$',
  ϑ: '$\\vartheta$',
  ϕ: '$\\phi$',
  ϵ: '$\\epsilon$',
};

/** Accent commands that are letters need a space before their argument (`\v c`), symbols not (`\'e`). */
function accent(command: string, base: string): string {
  const single = [...base].length === 1;
  if (/^[A-Za-z]$/.test(command)) return single ? `\\${command} ${base}` : `\\${command}{${base}}`;
  return single ? `\\${command}${base}` : `\\${command}{${base}}`;
}

const asciiCache = new Map<string, string | null>();

/**
 * One non-ASCII character in ASCII LaTeX, or null when LaTeX has no ASCII spelling for it.
 * Cached: a library repeats the same few hundred characters.
 */
function asciiOf(char: string): string | null {
  const cached = asciiCache.get(char);
  if (cached !== undefined) return cached;
  let out: string | null = NAMED[char] ?? null;
  if (out === null) {
    const parts = [...char.normalize('NFD')];
    let base = parts[0] as string;
    const marks = parts.slice(1);
    if (marks.length > 0 && marks.every((m) => ACCENTS[m] !== undefined)) {
      const named = NAMED[base];
      if (/^[A-Za-z]$/.test(base) || named !== undefined) {
        base = named !== undefined ? named.replace(/^\{(.*)\}$/, '$1') : base;
        for (const mark of marks) base = accent(ACCENTS[mark] as string, base);
        out = `{${base}}`;
      }
    }
  }
  if (asciiCache.size < 10_000) asciiCache.set(char, out);
  return out;
}

/** `text` with every non-ASCII character in ASCII LaTeX, those without a spelling braced as they are. */
export function toAsciiLatex(text: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[^\u0000-\u007f]/.test(text)) return text;
  let out = '';
  let kept = '';
  for (const char of text.normalize('NFC')) {
    if (char.charCodeAt(0) < 0x80) {
      if (kept) out += `{${kept}}`;
      kept = '';
      out += char;
      continue;
    }
    const ascii = asciiOf(char);
    if (ascii === null) {
      kept += char;
      continue;
    }
    if (kept) out += `{${kept}}`;
    kept = '';
    out += ascii;
  }
  if (kept) out += `{${kept}}`;
  return out;
}

/** A piece of a value: text, or a markup tag that has its partner. */
type Piece = { text: string } | { open: string; close: string } | { end: true };

const TAG = /<(\/?)(i|b|sup|sub|sc|span)((?:\s[^<>]*)?)>/gi;

/** What an opening tag becomes, or undefined when it is not Zotero's markup. */
function markupOf(name: string, attrs: string): { open: string; close: string } | undefined {
  switch (name) {
    case 'i':
      return { open: '\\textit{', close: '}' };
    case 'b':
      return { open: '\\textbf{', close: '}' };
    case 'sup':
      return { open: '\\textsuperscript{', close: '}' };
    case 'sub':
      return { open: '\\textsubscript{', close: '}' };
    case 'sc':
      return { open: '\\textsc{', close: '}' };
    case 'span':
      if (/small-caps/i.test(attrs)) return { open: '\\textsc{', close: '}' };
      if (/class\s*=\s*["']?nocase/i.test(attrs)) return { open: '{', close: '}' };
      return undefined;
    default:
      return undefined;
  }
}

/** Splits a value into text and paired markup; a tag without its partner stays text. */
function pieces(value: string): Piece[] {
  if (!value.includes('<')) return [{ text: value }];
  const tokens: Array<{ text: string } | { name: string; closing: boolean; raw: string; attrs: string }> = [];
  let last = 0;
  for (const m of value.matchAll(TAG)) {
    if (m.index > last) tokens.push({ text: value.slice(last, m.index) });
    tokens.push({
      name: (m[2] as string).toLowerCase(),
      closing: m[1] === '/',
      raw: m[0],
      attrs: m[3] ?? '',
    });
    last = m.index + m[0].length;
  }
  if (last < value.length) tokens.push({ text: value.slice(last) });
  // Pair tags: a closing tag closes the innermost open tag of its name, when that is the top.
  const paired = new Set<number>();
  const stack: number[] = [];
  tokens.forEach((t, i) => {
    if ('text' in t) return;
    if (!t.closing) {
      if (markupOf(t.name, t.attrs)) stack.push(i);
      return;
    }
    const top = stack[stack.length - 1];
    if (top !== undefined && (tokens[top] as { name: string }).name === t.name) {
      stack.pop();
      paired.add(top);
      paired.add(i);
    }
  });
  const out: Piece[] = [];
  tokens.forEach((t, i) => {
    if ('text' in t) out.push(t);
    else if (!paired.has(i)) out.push({ text: t.raw });
    else if (t.closing) out.push({ end: true });
    else out.push(markupOf(t.name, t.attrs) as { open: string; close: string });
  });
  return out;
}

/** Offsets (in the concatenated text of the value) of the braces that have no partner. */
function loneBraces(texts: readonly string[]): Set<number> {
  const lone = new Set<number>();
  const open: number[] = [];
  let offset = 0;
  for (const text of texts) {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x7b) open.push(offset + i);
      else if (c === 0x7d) {
        if (open.length > 0) open.pop();
        else lone.add(offset + i);
      }
    }
    offset += text.length;
  }
  for (const i of open) lone.add(i);
  return lone;
}

const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const UPPER = /[\p{Lu}\p{Lt}]/u;

/** Whether a word is braced: it has a capital, unless it is the first word and only its first letter is one. */
function protects(word: string, first: boolean): boolean {
  if (!UPPER.test(word)) return false;
  if (!first) return true;
  const rest = word.slice(String.fromCodePoint(word.codePointAt(0) as number).length);
  return UPPER.test(rest);
}

/**
 * A field value in LaTeX: markup, special characters, case protection and charset as the module
 * comment says. Leading and trailing white space is kept; the caller trims.
 */
export function latexValue(value: string, options: LatexOptions): string {
  const parts = pieces(value);
  const texts = parts.filter((p): p is { text: string } => 'text' in p).map((p) => p.text);
  const lone = /[{}]/.test(value) ? loneBraces(texts) : undefined;
  const ascii = options.charset === 'ascii';
  let out = '';
  let offset = 0;
  let firstWord = true;
  const closers: string[] = [];

  const plain = (text: string, base: number): string => {
    // Most text has nothing to escape: it stays as it is.
    if (!ESCAPED.test(text)) return ascii ? toAsciiLatex(text) : text;
    let s = '';
    for (let i = 0; i < text.length; i++) {
      const ch = text[i] as string;
      if (ch === '{') s += lone?.has(base + i) ? LONE_OPEN_BRACE : OPEN_BRACE;
      else if (ch === '}') s += lone?.has(base + i) ? LONE_CLOSE_BRACE : CLOSE_BRACE;
      else s += SPECIAL[ch] ?? ch;
    }
    return ascii ? toAsciiLatex(s) : s;
  };

  for (const part of parts) {
    if ('end' in part) {
      out += closers.pop() ?? '';
      continue;
    }
    if ('open' in part) {
      out += part.open;
      closers.push(part.close);
      continue;
    }
    const text = part.text;
    if (!options.protectCase) {
      out += plain(text, offset);
    } else {
      let last = 0;
      for (const m of text.matchAll(WORD)) {
        if (m.index > last) out += plain(text.slice(last, m.index), offset + last);
        const word = m[0];
        const converted = ascii ? toAsciiLatex(word) : word;
        // A word kept whole in braces (no ASCII spelling) is protected already.
        const braced = converted === `{${word.normalize('NFC')}}`;
        out += protects(word, firstWord) && !braced ? `{${converted}}` : converted;
        firstWord = false;
        last = m.index + word.length;
      }
      if (last < text.length) out += plain(text.slice(last), offset + last);
    }
    offset += text.length;
  }
  return out;
}
