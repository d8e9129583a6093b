/**
 * Core answers carry references to tools and inputs (core/call/refs.ts) that only a surface
 * renders. Tests that call core or a tool's `run` directly read them as each surface would.
 */
import { renderErrorRefs, renderRefs, renderValueRefs } from '../../src/core/call/refs.js';
import type { ZoteusError } from '../../src/core/errors.js';
import type { AnyTool } from '../../src/core/tool.js';
import { cliRefRenderer, commandRefs } from '../../src/surfaces/cli/refs.js';
import { mcpRefRenderer } from '../../src/surfaces/mcp/refs.js';
import { tools } from '../../src/tools/index.js';

const cli = cliRefRenderer(commandRefs(tools as readonly AnyTool[]));

/** A text as the CLI shows it. */
export const onCli = (text: string): string => renderRefs(text, cli);
/** A text as MCP shows it. */
export const onMcp = (text: string): string => renderRefs(text, mcpRefRenderer);
/** An error as the CLI shows it. */
export const errorOnCli = (error: ZoteusError): ZoteusError => renderErrorRefs(error, cli);
/** An error as MCP shows it. */
export const errorOnMcp = (error: ZoteusError): ZoteusError => renderErrorRefs(error, mcpRefRenderer);
/** An output as the CLI shows it. */
export const valueOnCli = <T>(value: T): T => renderValueRefs(value, cli);
