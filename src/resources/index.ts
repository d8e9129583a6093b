/** The one list of MCP resources, read generically by the MCP surface. */
import type { ResourceDeclaration } from '../core/resource.js';
import collections from './collections.js';
import schema from './schema.js';
import styles from './styles.js';

export const resources: readonly ResourceDeclaration[] = [collections, schema, styles];
