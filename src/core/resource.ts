/**
 * An MCP resource is declared once, like a tool: its URI, what it holds, and how to read
 * it. The MCP surface lists and reads every declaration of `src/resources/index.ts`.
 */
import type { Deps } from './tool.js';

export interface ResourceDeclaration {
  /** e.g. `zotero://collections`. */
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: 'application/json' | 'text/plain' | 'text/markdown';
  /** The content: JSON-serialisable for application/json, a string otherwise. */
  read(deps: Deps): Promise<unknown>;
}

export function defineResource(declaration: ResourceDeclaration): ResourceDeclaration {
  return declaration;
}
