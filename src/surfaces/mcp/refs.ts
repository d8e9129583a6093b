/** References (core/call/refs.ts) as MCP writes them: the tool and its arguments, by name. */
import type { RefRenderer } from '../../core/call/refs.js';

export const mcpRefRenderer: RefRenderer = {
  surface: 'mcp',
  tool(tool, args) {
    const given = Object.entries(args);
    return given.length ? `${tool} (${given.map(([name, value]) => `${name}: ${value}`).join(', ')})` : tool;
  },
  param: (name, value) => (value === undefined ? name : `${name}: ${value}`),
};
