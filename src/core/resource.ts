/**
 * An MCP resource is declared once, like a tool: its URI, what it holds, and how to read
 * it. The MCP surface lists and reads every declaration of `src/resources/index.ts`. A
 * resource template (`zotero://attachments/{library}/{key}`) names a family of resources: its
 * variables are read from the URI asked for, and it may answer bytes (a blob) as well as text.
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

/** What a template's read answers: text, or bytes the surface sends as they are (base64). */
export type ResourceContent = { mimeType: string; text: string } | { mimeType: string; bytes: Uint8Array };

export interface ResourceTemplateDeclaration {
  /** RFC 6570 level 1: `zotero://attachments/{library}/{key}`; a variable may hold `/`. */
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
  /** The content type when every resource of the template has one. */
  mimeType?: string;
  /** One resource of the family: the template's variables, decoded, from the URI asked for. */
  read(deps: Deps, variables: Readonly<Record<string, string>>): Promise<ResourceContent>;
}

export function defineResourceTemplate(
  declaration: ResourceTemplateDeclaration,
): ResourceTemplateDeclaration {
  return declaration;
}

/**
 * The variables of `uri` under `template`, or undefined when it is not one of its URIs. Each
 * variable takes at least one character; the literal text between them anchors the match (so
 * the last `/` before `{key}` splits `users/1/ABCD2345`); percent-escapes are decoded.
 */
export function matchTemplate(template: string, uri: string): Record<string, string> | undefined {
  const names: string[] = [];
  const pattern = template
    .split(/(\{[a-z_][a-z0-9_]*\})/i)
    .map((part) => {
      const name = /^\{([a-z_][a-z0-9_]*)\}$/i.exec(part)?.[1];
      if (name === undefined) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(name);
      return '(.+)';
    })
    .join('');
  const found = new RegExp(`^${pattern}$`).exec(uri);
  if (!found) return undefined;
  const out: Record<string, string> = {};
  try {
    names.forEach((name, i) => (out[name] = decodeURIComponent(found[i + 1] ?? '')));
  } catch {
    return undefined;
  }
  return out;
}
