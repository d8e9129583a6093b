/**
 * `resources/list`, `resources/templates/list` and `resources/read`, generic over the resource
 * and template declarations (src/resources): a URI no fixed resource has is matched against
 * the templates, whose bytes go out as a base64 `blob`. A read that fails is a JSON-RPC error whose message starts with the
 * Zoteus error code and whose `data` holds the error body, like tool errors' `_meta`.
 */
import {
  ProtocolErrorCode,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplateType,
} from '@modelcontextprotocol/server';
import { ZoteusError, toZoteusError } from '../../core/errors.js';
import { redactValue } from '../../core/redact.js';
import {
  matchTemplate,
  type ResourceDeclaration,
  type ResourceTemplateDeclaration,
} from '../../core/resource.js';
import type { Deps } from '../../core/tool.js';
import { ERROR_META_KEY } from './results.js';

/** A JSON-RPC error the SDK sends as is: `code`, a message starting with the Zoteus code, `data`. */
export class ResourceRequestError extends Error {
  readonly code: number;
  readonly data: Record<string, unknown>;

  constructor(error: ZoteusError, deps: Pick<Deps, 'redact'>) {
    const body = redactValue(error.toJSON(), deps.redact);
    super(`${body.code}: ${body.message}${body.hint ? ` Hint: ${body.hint}` : ''}`);
    this.name = 'ResourceRequestError';
    this.code =
      error.code === 'not_found' ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError;
    this.data = { [ERROR_META_KEY]: body };
  }
}

export function describeResource(resource: ResourceDeclaration): Resource {
  return {
    uri: resource.uri,
    name: resource.name,
    title: resource.title,
    description: resource.description,
    mimeType: resource.mimeType,
  };
}

export function describeTemplate(template: ResourceTemplateDeclaration): ResourceTemplateType {
  return {
    uriTemplate: template.uriTemplate,
    name: template.name,
    title: template.title,
    description: template.description,
    ...(template.mimeType !== undefined ? { mimeType: template.mimeType } : {}),
  };
}

export async function readResource(
  resources: readonly ResourceDeclaration[],
  templates: readonly ResourceTemplateDeclaration[],
  uri: string,
  deps: Deps,
): Promise<ReadResourceResult> {
  const resource = resources.find((r) => r.uri === uri);
  try {
    if (!resource) {
      for (const template of templates) {
        const variables = matchTemplate(template.uriTemplate, uri);
        if (!variables) continue;
        const content = await template.read(deps, variables);
        return {
          contents: [
            'bytes' in content
              ? { uri, mimeType: content.mimeType, blob: Buffer.from(content.bytes).toString('base64') }
              : { uri, mimeType: content.mimeType, text: deps.redact(content.text) },
          ],
        };
      }
      throw new ZoteusError('not_found', `There is no resource ${uri}.`, {
        hint: 'Call resources/list and resources/templates/list for the resources this server offers.',
      });
    }
    const content = await resource.read(deps);
    const text = typeof content === 'string' ? content : JSON.stringify(content);
    return { contents: [{ uri, mimeType: resource.mimeType, text: deps.redact(text) }] };
  } catch (error) {
    throw new ResourceRequestError(toZoteusError(error), deps);
  }
}
