/**
 * A capability is declared once (architecture.md, "The one idea"). Both surfaces are
 * generic loops over these declarations: the MCP tool, the CLI command, `zot schema`,
 * annotations, read-only mode, confirmation and `--dry-run` all derive from them.
 */
import type { SqlClient } from './store/sql.js';
import type { Toolset } from './toolsets.js';
import type { ServerPathInput } from './call/server-paths.js';
import type { z } from 'zod';
import type { Config } from './config.js';
import type { LibraryReader } from './library/port.js';
import type { Redactor } from './redact.js';
import type { UpstreamObserver } from './http/observe.js';
import type { WriteIds } from './writes/ids.js';
import type { JournalRecorder, UndoDeclaration } from './journal/recorder.js';

export type Tier = 'read' | 'write' | 'destructive';

/** One CLI command of a declaration. A tool with several actions maps each to its own command. */
export interface CliCommand {
  /** Words after `zot`, e.g. ['collection', 'list']. */
  path: readonly string[];
  /** Input fields taken as positional arguments, in order; the last may be an array (variadic). */
  args?: readonly string[];
  /** Input fields fixed by this command (e.g. `{ action: 'create' }`); not offered as flags. */
  preset?: Record<string, unknown>;
  /** Input fields not offered on this command (beyond the preset ones). */
  omit?: readonly string[];
  /** The command's own tier when it differs from the tool's (e.g. `collection create` is a write). */
  tier?: Tier;
  /** First line of help, when it differs from the tool's summary. */
  summary?: string;
  /**
   * The help of an input on this command, where the input's description speaks of several
   * actions (`collection_key`: "all actions except list/create") and this command is one.
   */
  help?: Record<string, string>;
  /** Option names that differ from the field name (`parent_collection` -> `parent`). */
  flags?: Record<string, string>;
  /**
   * Options whose value is a path, or `-` for stdin, whose content fills the field:
   * parsed as JSON (`--rows FILE|-`) or taken as text.
   */
  files?: Record<string, 'json' | 'text'>;
  /**
   * Another spelling of this command under a sibling's path, chosen by a flag: with
   * `{ path: ['note'], flags: { add: 'text', file: 'html' } }`, `zot note KEY --add TEXT` runs
   * this command (`zot note add KEY TEXT`) with `--add` filling `text`. A flag mapped to `''`
   * fills nothing and only chooses the command (`{ path: ['schema'], flags: { zotero: '' } }`).
   */
  via?: { path: readonly string[]; flags: Record<string, string> };
  /**
   * Old spellings of this command's options (the flag without `--`), accepted for a while with a
   * one-line notice on stderr and never shown in `--help` or `zot schema`: `field` fills that
   * input as its own flag would; `fields`, for an option whose JSON object value became
   * options of their own, fills each of those inputs from the object's field of the same name.
   */
  deprecatedFlags?: Record<string, DeprecatedFlag>;
}

export type DeprecatedFlag = { removedIn: string } & (
  { field: string; fields?: never } | { fields: readonly string[]; field?: never }
);

export interface ProgressEvent {
  event: 'start' | 'progress' | 'complete';
  phase: string;
  done?: number;
  total?: number;
  succeeded?: number;
  failed?: number;
  /**
   * Work that goes on in another process after this call (a background index build): a `start`
   * that no `complete` follows, announced once (the CLI prints `message` on a TTY).
   */
  background?: boolean;
  /**
   * For people: what this event announces, in words that name no command or tool (the CLI
   * prints the message of a background event, or of a `start`, once on a terminal).
   */
  message?: string;
}

export interface Logger {
  /** A prose diagnostic for humans (stderr on the CLI); redacted before it is written. */
  warn(message: string): void;
  debug(message: string): void;
}

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** What a handler may use. Built by the surface per call; no module-level state. */
export interface Deps {
  config: Config;
  env: Readonly<Record<string, string | undefined>>;
  clock: Clock;
  redact: Redactor;
  log: Logger;
  progress(event: ProgressEvent): void;
  /**
   * The surface a call came through. Core code does not branch on it: messages refer to tools
   * and inputs through core/call/refs.ts, which each surface renders in its own words.
   */
  surface: 'cli' | 'mcp';
  /**
   * How long this process lives: a CLI invocation (`call`) keeps on disk what the next one needs
   * (key checks, recent writes); a server (`server`) keeps it in memory.
   */
  lifetime: 'call' | 'server';
  version: string;
  /** Lazily created, shared services (Zotero client, stores); created on first use. */
  services: ServiceRegistry;
  /**
   * The keys and write tokens of this logical request's creates: from the idempotency record
   * when the call has a key (so a retry sends the same ones), else fresh for the call.
   */
  writeIds: WriteIds;
  /**
   * Where this call's writes went, set by the routing of writes (library/write-route.ts) when
   * a tool opens its library to write; the pipeline gives each call its own, and the surfaces
   * report it (`data.written_to`).
   */
  written?: { to?: 'desktop' | 'cloud' } | undefined;
  /**
   * On a shared deployment (HTTP with several callers), the one folder this caller may
   * write files into; undefined locally, where any path the user can write works.
   */
  fileRoot?: string | undefined;
  /**
   * The write journal of this call (core/journal): set by the pipeline for every call that
   * changes the library; the write client records each batch in it before sending it.
   */
  journal?: JournalRecorder | undefined;
  /**
   * On a shared deployment with a state database (ZOTEUS_DATABASE_URL), where this caller's
   * idempotency records and write journal live, under `owner` (the caller); absent: the
   * embedded SQLite files of this machine.
   */
  sharedState?: SharedState | undefined;
  /**
   * On a server that keeps metrics, told of every Zotero Web API answer and wait (the Web API
   * client is built with it); absent elsewhere.
   */
  upstream?: UpstreamObserver | undefined;
}

/** The state database of a shared deployment, as one caller sees it. */
export interface SharedState {
  db: SqlClient;
  /** Whose records these are: every row read or written carries it. */
  owner: string;
  /**
   * With replicas on PostgreSQL: this replica's id, under which it holds its share of the
   * in-flight bounds (core/store/shared-limits.ts), and the cap on all requests to one
   * upstream server (ZOTEUS_UPSTREAM_MAX_IN_FLIGHT), if any.
   */
  replica?: string | undefined;
  upstreamMaxInFlight?: number | undefined;
}

export interface ServiceRegistry {
  get<T>(name: string, create: () => T | Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** What `--dry-run` prints under `data.would`, besides the command and its arguments. */
export type Plan = Record<string, unknown>;

/**
 * A `text` that is a document (a Markdown or CSV table, BibTeX): the CLI prints it as it is,
 * never re-wrapped to the terminal's width, so what a person copies is the document.
 */
export interface TextDocument {
  document: string;
}

export interface ToolDeclaration<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  /** One line: `--help`, `zot schema`'s `help`, the CLI's command list. */
  summary: string;
  /** What a model reads: effects, when to use it or a sibling, parameters, result. */
  description: string;
  tier: Tier;
  /** Reaches outside the machine (Zotero, resolvers). False only for pure local tools. */
  openWorld: boolean;
  /** Calling twice with the same input has no further effect. Defaults: read → true, else false. */
  idempotent?: boolean;
  /**
   * Tools that preview unless asked to apply: the tier of this call (a preview is a `read`, so
   * read-only mode allows it and nobody is asked to confirm it). Defaults to `tier`.
   */
  callTier?(input: z.infer<I>): Tier;
  /** For write tools that only touch local files: `WRITES FILES` instead of `MUTATES LIBRARY`. */
  writesFilesOnly?: boolean;
  /** Whether the call needs an API key (checked by the surface before the work: `auth_missing`). */
  needsKey?: boolean | ((input: z.infer<I>) => boolean);
  since: string;
  deprecated?: boolean;
  /**
   * Specified to the letter by the user's seeds (seeds/000–002): `tools/list` publishes its
   * output-field texts as the seed words them, where other tools publish the answer's shape only.
   */
  seed?: boolean;
  /** The group `ZOTEUS_TOOLSETS` selects it by (core/toolsets.ts). */
  toolset: Toolset;
  /** In the set an MCP server offers when no toolsets are chosen (the lean default). */
  inDefaultSet?: boolean;
  /**
   * Whether this installation offers the tool (permanent deletion only with
   * ZOTEUS_ALLOW_DELETE=true). MCP lists only enabled tools; the CLI keeps the command so
   * `zot schema` is the same everywhere, and the tool itself refuses with permission_denied.
   */
  enabled?(config: Config): boolean;
  /** What a call is told when `enabled` says no (before anything else, offline). */
  disabled?: { message: string; hint?: string };
  /**
   * For the one tool a client should call first: what it learns there ("to see the default
   * library and which backends are set up"); the MCP server's instructions name it.
   */
  startHere?: string;
  /**
   * What the call requires beyond its schema, checked offline before anything else: the
   * fields an action needs, something to change. Throws a `validation_error`.
   */
  check?(input: z.infer<I>, context: { config: Config }): void;
  /**
   * Inputs that name a file to read on the machine Zoteus runs on, each with the inline input
   * to send instead: refused on a shared deployment, before anything else (call/server-paths.ts).
   */
  serverPaths?: Readonly<Record<string, ServerPathInput>>;
  /**
   * For calls that remove things in bulk: how many, and what (for the bulk-write threshold,
   * ZOTEUS_CONFIRM_BULK_WRITES, which then needs `confirm: true`); undefined when not bulk.
   */
  bulk?(input: z.infer<I>): { count: number; what: string } | undefined;
  /**
   * Destructive calls: what a person is asked to confirm, as a phrase after "… will"
   * ("delete collection "Climate" (CLIMATE2) and its 3 subcollections"). `desktop` reads the
   * library from the desktop's data when the desktop holds it, else is undefined, and the phrase
   * names its targets by key: nothing reaches the cloud before the person answers.
   */
  confirmation?(input: z.infer<I>, desktop: LibraryReader | undefined): Promise<string>;
  cli: readonly CliCommand[];
  input: I;
  output: O;
  run(input: z.infer<I>, deps: Deps): Promise<z.infer<O>>;
  /**
   * Mutating tools: what undo can restore of a call, and what it cannot. Journaled requests
   * of a tool without it are listed by history as not undoable, with that reason.
   */
  undo?: UndoDeclaration;
  /**
   * Mutating tools whose dry run can say more from local state alone (the write journal): awaited
   * after `plan`, its fields added to the plan. Offline: no credentials, no network.
   */
  planDetail?(input: z.infer<I>, deps: Deps): Promise<Plan>;
  /** Mutating tools: the planned change, computed without credentials or network. */
  plan?(input: z.infer<I>, deps: Pick<Deps, 'config' | 'env'>): Plan;
  /** One line for MCP `content` and the CLI's table header. */
  summarize?(output: z.infer<O>, input: z.infer<I>): string;
  /**
   * The result as text a person reads (a rendered table, a digest): the CLI prints it in
   * table mode instead of the generic rendering. (MCP `content` carries the output as JSON
   * after the summary instead: a model reads the data, and a second copy would double the size.)
   * A document is returned as `{ document }`: printed as it is, where other text is fitted to
   * the terminal.
   */
  text?(output: z.infer<O>, input: z.infer<I>): string | TextDocument;
  /** The output field that holds rows, streamed by `--stream` and rendered as a table. */
  rows?: keyof z.infer<O> & string;
  /** Ready-to-run follow-up commands after success (a write, or a preview that one follows). */
  next?(output: z.infer<O>, input: z.infer<I>): string[];
  /**
   * For tools whose output can carry `failed`: the input that retries only the failed
   * entries of an earlier output, and how to merge the retry into it (idempotency replays).
   */
  retryFailed?: {
    input(input: z.infer<I>, previous: z.infer<O>): z.infer<I> | null;
    merge(previous: z.infer<O>, retry: z.infer<O>): z.infer<O>;
  };
}

/**
 * The help of a CLI group: a word after `zot` under which declarations place commands (`zot tag`,
 * `zot collection`). Declared beside the tools of its noun (tools/<noun>/group.ts), listed in
 * tools/index.ts; the CLI reads them, so it names no noun itself.
 */
export interface GroupDeclaration {
  /** The group's words after `zot`, e.g. ['tag']. */
  path: readonly string[];
  /** One line: `zot tag --help`, the `help` of `zot schema tag`. */
  summary: string;
}

export function defineGroup(group: GroupDeclaration): GroupDeclaration {
  return group;
}

/** Erased form used by the surfaces, which handle every declaration alike. */
export type AnyTool = ToolDeclaration<z.ZodObject, z.ZodObject>;

export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
  declaration: ToolDeclaration<I, O>,
): ToolDeclaration<I, O> {
  return declaration;
}

export function isMutating(tier: Tier): boolean {
  return tier !== 'read';
}

/**
 * Whether a call of this tier changes the library: what read-only mode refuses. A tool that
 * only writes local files (`writesFilesOnly`) stays available (conventions.md, "Tiers").
 */
export function changesLibrary(tool: Pick<AnyTool, 'writesFilesOnly'>, tier: Tier): boolean {
  return isMutating(tier) && tool.writesFilesOnly !== true;
}

/** The tier of one CLI command of a tool. */
export function commandTier(tool: AnyTool, command: CliCommand): Tier {
  return command.tier ?? tool.tier;
}

/** Whether this call of the tool needs an API key (`needsKey`, a flag or a function of the input). */
export function requiresKey(tool: AnyTool, input: Record<string, unknown>): boolean {
  return typeof tool.needsKey === 'function' ? tool.needsKey(input) : tool.needsKey === true;
}
