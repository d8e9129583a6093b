/**
 * The MCP surface: the only code that imports the MCP SDK. Import it lazily (it loads the
 * SDK): `const { runMcp } = await import('../surfaces/mcp/index.js')`.
 */
export {
  buildMcpServer,
  createCatalogue,
  createServer,
  LIST_CACHE_HINT,
  type McpCatalogue,
  type McpServerOptions,
} from './server.js';
export { LEGACY_REVISIONS, MODERN_REVISION, REQUEST_ID_META_KEY } from './protocol.js';
export { httpSettings, type HttpSettings } from './http-settings.js';
export { runMcp, type RunMcpOptions } from './run.js';
export {
  DEFAULT_HTTP_HOST,
  DEFAULT_HTTP_PORT,
  MCP_HTTP_PATH,
  STATELESS_CALLER,
  isLoopbackHost,
  originAllowed,
  startHttp,
  startStdio,
  type HttpHandle,
  type HttpOptions,
  type StdioOptions,
} from './transports.js';
export { ERROR_META_KEY } from './results.js';
export { describeTool, exposedTools } from './schemas.js';
