/**
 * A Zotero test server that knows one key and its user, for tests of the surfaces whose
 * fixture tools need a key: the call pipeline checks the key (GET /keys/current) before the
 * work, so such a tool needs a server that answers the check.
 */
import { startZoteroServer, type ZoteroTestServer } from './zotero-server/index.js';

export async function startKeyServer(key: string, userID = 1): Promise<ZoteroTestServer> {
  const server = await startZoteroServer();
  server.addUser({ userID, username: 'fixture' });
  server.addKey({
    key,
    userID,
    access: {
      user: { library: true, write: true, files: true, notes: true },
      groups: { all: { library: true, write: true } },
    },
  });
  return server;
}
