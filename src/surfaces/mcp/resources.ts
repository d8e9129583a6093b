/**
 * `resources/list` and `resources/read`, generic over the resource declarations
 * (src/resources). A read that fails is a JSON-RPC error whose message starts with the
 * Zoteus error code and whose `data` holds the error body, like tool errors' `_meta`.
 */
import { ProtocolErrorCode, type ReadResourceResult, type Resource } from '@modelcontextprotocol/server';
import { ZoteusError, toZoteusError } from '../../core/errors.js';
import { redactValue } from '../../core/redact.js';
import type { ResourceDeclaration } from '../../core/resource.js';
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

export async function readResource(
  resources: readonly ResourceDeclaration[],
  uri: string,
  deps: Deps,
): Promise<ReadResourceResult> {
  const resource = resources.find((r) => r.uri === uri);
  try {
    if (!resource) {
      throw new ZoteusError('not_found', `There is no resource ${uri}.`, {
        hint: 'Call resources/list for the resources this server offers.',
      });
    }
    const content = await resource.read(deps);
    const text = typeof content === 'string' ? content : JSON.stringify(content);
    return { contents: [{ uri, mimeType: resource.mimeType, text: deps.redact(text) }] };
  } catch (error) {
    throw new ResourceRequestError(toZoteusError(error), deps);
  }
}
