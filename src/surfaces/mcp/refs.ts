/** Tool references (core/call/refs.ts) as MCP writes them: the tool and its arguments. */
import type { RefRenderer } from '../../core/call/refs.js';

export const mcpRefRenderer: RefRenderer = (tool, args) => {
  const given = Object.entries(args);
  return given.length ? `${tool} (${given.map(([name, value]) => `${name}: ${value}`).join(', ')})` : tool;
};
