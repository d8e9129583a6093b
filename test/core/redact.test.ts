/** The redactor every text leaving the process passes through: known secrets and key-shaped forms. */
import { describe, expect, it } from 'vitest';
import {
  createRedactor,
  MIN_SECRET_RUN,
  redactedJson,
  redactValue,
  REDACTED,
} from '../../src/core/redact.js';

const KEY = 'AbCdEfGhIjKlMnOpQrStUvWx';
/** A compatible server's key: hyphens and other punctuation. */
const HYPHENS = 'zk-7Hq2-Wm9x-Lp4R-tV8n-Bc3D';

/** Every 8-character window of `secret` that `text` still holds. */
function runsOf(text: string, secret: string): string[] {
  const found: string[] = [];
  for (let i = 0; i + MIN_SECRET_RUN <= secret.length; i++) {
    if (text.includes(secret.slice(i, i + MIN_SECRET_RUN))) found.push(secret.slice(i, i + MIN_SECRET_RUN));
  }
  return found;
}

/** The rule, spelled out slowly: every position covered by an 8-character window of a secret goes. */
function naive(text: string, secrets: string[]): string {
  const covered = new Array<boolean>(text.length).fill(false);
  for (let i = 0; i + MIN_SECRET_RUN <= text.length; i++) {
    const window = text.slice(i, i + MIN_SECRET_RUN);
    if (secrets.some((s) => s.includes(window))) covered.fill(true, i, i + MIN_SECRET_RUN);
  }
  let out = '';
  for (let i = 0; i < text.length; i++) {
    if (!covered[i]) out += text[i];
    else if (i === 0 || !covered[i - 1]) out += REDACTED;
  }
  return out;
}

describe('createRedactor', () => {
  const redact = createRedactor([KEY, 'short', undefined]);

  it('removes a configured secret wherever it stands', () => {
    expect(redact(`key ${KEY} and again${KEY}.`)).toBe(`key ${REDACTED} and again${REDACTED}.`);
  });

  it('leaves secrets too short to be keys alone, and text without secrets unchanged', () => {
    expect(redact('a short note')).toBe('a short note');
    const plain = 'Sea-level rise: Church & White (2011), https://example.org/a?b=1&c=2';
    expect(redact(plain)).toBe(plain);
  });

  it('removes keys in the forms a header, a bearer token or a query carries them, in any case', () => {
    expect(redact('Zotero-API-Key: zzzzzzzz1234')).toBe(`Zotero-API-Key: ${REDACTED}`);
    expect(redact('zotero-api-key=abc123def')).toBe(`zotero-api-key=${REDACTED}`);
    expect(redact('authorization: Bearer tok_1234567890')).toBe(`authorization: Bearer ${REDACTED}`);
    expect(redact('sent Bearer abcdefghijklmnop here')).toBe(`sent Bearer ${REDACTED} here`);
    expect(redact('GET /users/1/items?limit=5&key=SECRETKEY123')).toBe(
      `GET /users/1/items?limit=5&key=${REDACTED}`,
    );
    expect(redact('https://x.org/?API_KEY=s3cr3t&x=1')).toBe(`https://x.org/?API_KEY=${REDACTED}&x=1`);
    expect(redact('?apiKey=s3cr3t')).toBe(`?apiKey=${REDACTED}`);
  });

  it('removes any run of 8 or more of a secret’s characters: prefixes, suffixes and middles', () => {
    const redact = createRedactor([HYPHENS]);
    for (let start = 0; start < HYPHENS.length; start++) {
      for (let end = start + MIN_SECRET_RUN; end <= HYPHENS.length; end++) {
        const out = redact(`before ${HYPHENS.slice(start, end)} after`);
        expect(out).toBe(`before ${REDACTED} after`);
      }
    }
    // Seven characters are not a run: ordinary text keeps such fragments.
    expect(redact(`x ${HYPHENS.slice(0, 7)} y`)).toBe(`x ${HYPHENS.slice(0, 7)} y`);
  });

  it('leaves no run in any cut of a message that quotes a key past its 177th character', () => {
    const redact = createRedactor([HYPHENS, KEY]);
    for (const secret of [HYPHENS, KEY]) {
      const message = `${'x'.repeat(177)}${secret} trailing words`;
      for (let cut = 0; cut <= message.length; cut++) {
        expect(runsOf(redact(message.slice(0, cut)), secret)).toEqual([]);
        expect(runsOf(redact(message.slice(cut)), secret)).toEqual([]);
      }
    }
  });

  it('replaces each maximal run once, however the runs of one or several secrets overlap', () => {
    const redact = createRedactor([KEY, HYPHENS]);
    expect(redact(`${KEY}${KEY}`)).toBe(REDACTED);
    expect(redact(`${KEY.slice(0, 10)}-${HYPHENS.slice(5)}`)).toBe(`${REDACTED}-${REDACTED}`);
    expect(redact(`a${KEY.slice(3, 20)}b${KEY.slice(9)}c`)).toBe(`a${REDACTED}b${REDACTED}c`);
  });

  it('agrees with the rule spelled out slowly, on texts mixing fragments of secrets and noise', () => {
    const secrets = [KEY, HYPHENS, 'aaaaaaaaab', 'sk-"quoted\\slash-9'];
    const redact = createRedactor(secrets);
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 500; round++) {
      let text = '';
      while (text.length < 120) {
        const secret = secrets[random(secrets.length)] as string;
        const start = random(secret.length);
        text += random(3) === 0 ? 'xa-"7 '.slice(random(4)) : secret.slice(start, start + 1 + random(14));
      }
      expect(redact(text)).toBe(naive(text, secrets));
    }
  });

  it('mayChange is true for a text holding any 8-character run of a secret, at any position', () => {
    const redact = createRedactor([HYPHENS]);
    for (let i = 0; i + MIN_SECRET_RUN <= HYPHENS.length; i++) {
      for (const pad of ['', 'x', 'xy', 'xyz']) {
        expect(redact.mayChange(`${pad}${HYPHENS.slice(i, i + MIN_SECRET_RUN)}${pad}`)).toBe(true);
      }
    }
    // It may say true for less (6 characters are enough to look), never false for a run.
    expect(redact.mayChange('Sea-level rise: Church & White (2011), zk-7H, Lp4R-t')).toBe(false);
  });

  it('with() adds secrets to the same rules', () => {
    expect(redact.with(['another-secret-value'])(`x another-secret-value ${KEY}`)).toBe(
      `x ${REDACTED} ${REDACTED}`,
    );
  });
});

describe('redactValue', () => {
  it('redacts every string of a JSON value, keeping its shape and its other values', () => {
    const value = { a: [`k=${KEY}`, 3, null, true], b: { c: 'Bearer abcdefghijklmnopq', d: 'plain' } };
    expect(redactValue(value, createRedactor([KEY]))).toEqual({
      a: [`k=${REDACTED}`, 3, null, true],
      b: { c: `Bearer ${REDACTED}`, d: 'plain' },
    });
  });
});

describe('redactedJson', () => {
  const values: unknown[] = [
    { ok: true, data: { items: [{ title: 'Sea-level rise', url: 'https://x.org/?a=1&b=2' }], n: 3 } },
    { data: { note: `see ${KEY} here`, tags: ['a', { tag: `x${KEY}y` }] } },
    { data: { log: 'GET /items?key=SECRETKEY123 200', auth: 'authorization: Bearer tok_1234567890' } },
    // A token after a newline: the JSON text holds "\n", the string a real newline.
    { data: { text: 'Bearer\nabcdefghijklmnopq' } },
    { data: { 'zotero-api-key': 'a field named like a header', v: null, w: [1, 2.5, false] } },
  ];

  it('is the JSON of the redacted value, whatever the value holds', () => {
    const redact = createRedactor([KEY]);
    for (const value of values) {
      expect(redactedJson(value, redact)).toBe(JSON.stringify(redactValue(value, redact)));
    }
    expect(redactedJson(values[1], redact)).not.toContain(KEY);
  });

  it('finds a secret JSON would escape', () => {
    const odd = 'sec"ret\\value-123';
    const redact = createRedactor([odd]);
    const out = redactedJson({ data: { s: `x ${odd} y` } }, redact);
    expect(out).toBe(JSON.stringify({ data: { s: `x ${REDACTED} y` } }));
  });

  it('finds any run of a secret JSON would escape, in the value and in its JSON text', () => {
    const odd = 'k3y"with\\quote-and-slash';
    const escaped = JSON.stringify(odd).slice(1, -1);
    const redact = createRedactor([odd]);
    for (let i = 0; i + MIN_SECRET_RUN <= odd.length; i++) {
      const value = { data: { s: `see ${odd.slice(i, i + MIN_SECRET_RUN)} here` } };
      expect(redact.mayChange(JSON.stringify(value))).toBe(true);
      const out = redactedJson(value, redact);
      expect(out).toBe(JSON.stringify({ data: { s: `see ${REDACTED} here` } }));
      // Text that already is JSON (a tool's rendered body) loses the escaped form too.
      expect(runsOf(redact(JSON.stringify(value)), escaped)).toEqual([]);
    }
  });

  it('leaves text with nothing to redact as JSON.stringify writes it', () => {
    const redact = createRedactor([KEY]);
    expect(redact.mayChange(JSON.stringify(values[0]))).toBe(false);
    expect(redact.mayChange(JSON.stringify(values[1]))).toBe(true);
    expect(redactedJson(values[0], redact)).toBe(JSON.stringify(values[0]));
  });
});
