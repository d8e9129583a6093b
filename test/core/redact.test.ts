/** The redactor every text leaving the process passes through: known secrets and key-shaped forms. */
import { describe, expect, it } from 'vitest';
import { createRedactor, redactValue, REDACTED } from '../../src/core/redact.js';

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
