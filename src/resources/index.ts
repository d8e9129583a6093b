/** The one list of MCP resources, read generically by the MCP surface. */
import type { ResourceDeclaration } from '../core/resource.js';

export const resources: readonly ResourceDeclaration[] = [];
