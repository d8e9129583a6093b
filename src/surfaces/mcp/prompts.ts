/**
 * `prompts/list` and `prompts/get`, generic over the prompt declarations (src/prompts). A
 * prompt's messages are built from the tools this server exposes, so in read-only mode, or
 * before a tool exists, the prompt does not name it. A bad request (unknown prompt, missing
 * or invalid argument, unknown argument) is a JSON-RPC `InvalidParams` error whose message
 * names the prompt and the argument, with the Zoteus error body in `data`.
 */
import { ProtocolErrorCode, type GetPromptResult, type Prompt } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { ZoteusError } from '../../core/errors.js';
import { promptArguments, type AnyPrompt } from '../../core/prompt.js';
import type { AnyTool } from '../../core/tool.js';
import { ERROR_META_KEY } from './results.js';

/** A JSON-RPC error the SDK sends as is: `code`, a clean `message`, and `data`. */
export class PromptRequestError extends Error {
  readonly code = ProtocolErrorCode.InvalidParams;
  readonly data: Record<string, unknown>;

  constructor(error: ZoteusError) {
    super(error.hint ? `${error.message} ${error.hint}` : error.message);
    this.name = 'PromptRequestError';
    this.data = { [ERROR_META_KEY]: error.toJSON() };
  }
}

/** The `prompts/list` entry of one declaration. */
export function describePrompt(prompt: AnyPrompt): Prompt {
  return {
    name: prompt.name,
    title: prompt.title,
    description: prompt.description,
    arguments: promptArguments(prompt),
  };
}

function issueText(issue: z.core.$ZodIssue): string {
  const field = issue.path.length > 0 ? String(issue.path[0]) : undefined;
  if (issue.code === 'unrecognized_keys')
    return `unknown argument ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
  return field && !issue.message.startsWith(field) ? `${field}: ${issue.message}` : issue.message;
}

/** Validates the string arguments of a `prompts/get` and returns the built prompt. */
export function getPrompt(
  prompts: readonly AnyPrompt[],
  tools: readonly AnyTool[],
  name: string,
  args: Record<string, string> | undefined,
): GetPromptResult {
  const prompt = prompts.find((p) => p.name === name);
  if (!prompt) {
    throw new PromptRequestError(
      new ZoteusError('not_found', `There is no prompt named ${JSON.stringify(name)}.`, {
        hint: `Prompts on this server: ${prompts.map((p) => p.name).join(', ') || '(none)'}.`,
      }),
    );
  }
  const parsed = prompt.arguments.safeParse(args ?? {});
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const field =
      first?.code === 'unrecognized_keys'
        ? first.keys[0]
        : first?.path.length
          ? String(first.path[0])
          : undefined;
    const accepted = promptArguments(prompt)
      .map((a) => (a.required ? `${a.name} (required)` : a.name))
      .join(', ');
    throw new PromptRequestError(
      new ZoteusError(
        'validation_error',
        `Invalid arguments for prompt ${prompt.name}: ${parsed.error.issues.map(issueText).join('; ')}.`,
        { ...(field !== undefined ? { field } : {}), hint: `Arguments: ${accepted}.` },
      ),
    );
  }
  const built = prompt.build(parsed.data, { tools });
  return {
    ...(built.description !== undefined ? { description: built.description } : {}),
    messages: built.messages,
  };
}
