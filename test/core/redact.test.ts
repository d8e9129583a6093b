/** The redactor every text leaving the process passes through: known secrets and key-shaped forms. */
import { describe, expect, it } from 'vitest';
import { createRedactor, redactedJson, redactValue, REDACTED } from '../../src/core/redact.js';

const KEY = 'AbCdEfGhIjKlMnOpQrStUvWx';

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

  it('leaves text with nothing to redact as JSON.stringify writes it', () => {
    const redact = createRedactor([KEY]);
    expect(redact.mayChange(JSON.stringify(values[0]))).toBe(false);
    expect(redact.mayChange(JSON.stringify(values[1]))).toBe(true);
    expect(redactedJson(values[0], redact)).toBe(JSON.stringify(values[0]));
  });
});
