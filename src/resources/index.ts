/** The one list of MCP resources and resource templates, read generically by the MCP surface. */
import type { ResourceDeclaration, ResourceTemplateDeclaration } from '../core/resource.js';
import attachments from './attachments.js';
import collections from './collections.js';
import files from './files.js';
import schema from './schema.js';
import styles from './styles.js';

export const resources: readonly ResourceDeclaration[] = [collections, schema, styles];

export const resourceTemplates: readonly ResourceTemplateDeclaration[] = [attachments, files];
