/**
 * An MCP prompt is declared once, like a tool: its name, what it is for, its arguments
 * (MCP prompt arguments are strings, validated by a zod object of string fields) and how it
 * builds its messages. The messages are built from the tool list the server exposes, so a
 * prompt only ever names tools that exist.
 */
import type { z } from 'zod';
import type { AnyTool } from './tool.js';

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: { type: 'text'; text: string };
}

export interface PromptContext {
  /** The tools the server exposes to this client (read-only mode leaves the writes out). */
  tools: readonly AnyTool[];
}

export interface PromptResult {
  /** A description of this rendering of the prompt (e.g. which tools it relies on). */
  description?: string;
  messages: PromptMessage[];
}

export interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
}

export interface PromptDeclaration<A extends z.ZodObject = z.ZodObject> {
  /** `zotero-…`, kebab-case like MCP clients show them. */
  name: string;
  title: string;
  description: string;
  /**
   * The arguments: a strict zod object whose fields take strings (what MCP sends); each
   * field's `.describe()` is its description, and a field that accepts `undefined` is optional.
   * Transforms turn the strings into what `build` uses.
   */
  arguments: A;
  build(args: z.output<A>, context: PromptContext): PromptResult;
}

export type AnyPrompt = PromptDeclaration<z.ZodObject>;

export function definePrompt<A extends z.ZodObject>(declaration: PromptDeclaration<A>): PromptDeclaration<A> {
  return declaration;
}

/** The argument list `prompts/list` publishes, derived from the zod object. */
export function promptArguments(prompt: AnyPrompt): PromptArgument[] {
  return Object.entries(prompt.arguments.shape).map(([name, schema]) => {
    const field = schema as z.ZodType;
    return {
      name,
      description: field.description ?? '',
      required: !field.safeParse(undefined).success,
    };
  });
}

/** Whether a tool of this name is in the list (prompts name only tools that exist). */
export function hasTool(context: PromptContext, name: string): boolean {
  return context.tools.some((tool) => tool.name === name);
}
