/** The transports: stdio (the default, stdio.ts) and Streamable HTTP (http.ts). */
export { startStdio, type StdioOptions } from './stdio.js';
export {
  DEFAULT_HTTP_HOST,
  DEFAULT_HTTP_PORT,
  MAX_BODY_BYTES,
  MCP_HTTP_PATH,
  STATELESS_CALLER,
  originAllowed,
  startHttp,
  type HttpHandle,
  type HttpOptions,
  type ServerFactory,
} from './http.js';
export { isLoopbackHost } from './loopback.js';
