/**
 * Which clients and redirect URIs the authorization server accepts, and the addresses it
 * never fetches a Client ID Metadata Document from when it serves the internet (SSRF).
 */
import { describe, expect, it } from 'vitest';
import { sqlAuthStore } from '../../../../src/core/store/auth-store.js';
import {
  isPublicAddress,
  lookUpClient,
  redirectUriListed,
} from '../../../../src/surfaces/mcp/auth/clients.js';
import { openTestDatabase } from './databases.js';

describe('redirect URIs', () => {
  it('match exactly, except that a loopback one may name any port', () => {
    const listed = ['https://app.example/cb', 'http://127.0.0.1/callback', 'http://[::1]:8080/cb?x=1'];
    expect(redirectUriListed(listed, 'https://app.example/cb')).toBe(true);
    expect(redirectUriListed(listed, 'https://app.example:8443/cb')).toBe(false);
    expect(redirectUriListed(listed, 'https://app.example/cb/')).toBe(false);
    expect(redirectUriListed(listed, 'http://127.0.0.1:53121/callback')).toBe(true);
    expect(redirectUriListed(listed, 'http://127.0.0.1:53121/other')).toBe(false);
    expect(redirectUriListed(listed, 'http://localhost:53121/callback')).toBe(false);
    expect(redirectUriListed(listed, 'http://[::1]:4000/cb?x=1')).toBe(true);
    expect(redirectUriListed(listed, 'http://[::1]:4000/cb')).toBe(false);
  });
});

describe('Client ID Metadata Documents on a server that serves the internet', () => {
  it('are never fetched from a loopback, private or link-local address', async () => {
    const database = await openTestDatabase('sqlite');
    try {
      const store = sqlAuthStore(database.db);
      for (const clientId of [
        'https://127.0.0.1/client.json',
        'https://10.1.2.3/client.json',
        'https://[::1]/client.json',
        'https://169.254.169.254/latest/meta-data',
        'https://localhost/client.json',
      ]) {
        expect(await lookUpClient(clientId, { store, allowLoopbackHttp: false })).toEqual({
          ok: false,
          message: `client_id ${clientId} points to a non-public address; a Client ID Metadata Document must be on the public internet.`,
        });
      }
      expect(
        await lookUpClient('http://127.0.0.1:9/client.json', { store, allowLoopbackHttp: false }),
      ).toEqual({
        ok: false,
        message: 'client_id http://127.0.0.1:9/client.json must be an https URL.',
      });
      expect(await lookUpClient('https://app.example', { store, allowLoopbackHttp: false })).toEqual({
        ok: false,
        message: 'client_id https://app.example must have a path.',
      });
      expect(await lookUpClient('zoteus-unknown', { store, allowLoopbackHttp: false })).toMatchObject({
        ok: false,
        message: expect.stringContaining('Unknown client_id "zoteus-unknown"'),
      });
    } finally {
      await database.close();
    }
  });

  it('tells public addresses from the others', () => {
    for (const address of [
      '93.184.216.34',
      '2606:2800:220:1:248:1893:25c8:1946',
      '8.8.8.8',
      '::ffff:8.8.8.8',
    ]) {
      expect(isPublicAddress(address)).toBe(true);
    }
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.20.1.1',
      '192.168.1.1',
      '100.64.0.1',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      'nonsense',
    ]) {
      expect(isPublicAddress(address)).toBe(false);
    }
  });
});
