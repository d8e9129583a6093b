/**
 * Operating the HTTP server: what a load balancer, Prometheus and a log collector see.
 *
 *   GET /healthz   200 {"status":"ok"} while the process answers (any Host: probes use the pod's address)
 *   GET /readyz    200 {"status":"ready"} when the state database answers and has every migration
 *                  (without sign-in there is none: always ready); 503 {"status":"not_ready","reason":…}
 *                  otherwise, and from the start of a shutdown
 *   GET /metrics   the Prometheus text exposition format (version 0.0.4), written here; with
 *                  ZOTEUS_METRICS_TOKEN only for `Authorization: Bearer <token>`, else only to a
 *                  client on loopback that came through no proxy (no Forwarded/X-Forwarded-For),
 *                  or to anyone when the server runs without sign-in (it then listens on loopback)
 *
 * None of them needs a bearer token or shows library data; the metrics carry no tenant id, key or
 * library text in their labels (tool names only of tools the server has, error codes as outcomes).
 *
 * The settings, read with `--http`:
 *   ZOTEUS_LOG_FORMAT          `text` (default: the lines as before) or `json` (one object a line:
 *                              time, level, msg, and request_id, method, tool, outcome, ms)
 *   ZOTEUS_METRICS_TOKEN       the bearer token `/metrics` asks for (unset: see above)
 *   ZOTEUS_SHUTDOWN_GRACE_S    seconds a SIGTERM/SIGINT lets the calls in flight finish (default 30)
 *
 * Everything is per server: `createMetrics()` makes the counters one server process keeps.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ZoteusError } from '../../core/errors.js';
import type { UpstreamObserver } from '../../core/http/observe.js';
import type { Env } from '../../core/paths.js';
import type { Redactor } from '../../core/redact.js';

export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';
export const METRICS_PATH = '/metrics';
export const DEFAULT_SHUTDOWN_GRACE_S = 30;
/** A state database that has not answered /readyz's question by then is not ready. */
export const READY_TIMEOUT_MS = 5000;

export type LogFormat = 'text' | 'json';

export interface OpsSettings {
  logFormat: LogFormat;
  metricsToken?: string;
  shutdownGraceMs: number;
}

export function opsSettings(env: Env): OpsSettings {
  const format = (env.ZOTEUS_LOG_FORMAT ?? '').trim().toLowerCase();
  if (format !== '' && format !== 'text' && format !== 'json') {
    throw new ZoteusError(
      'validation_error',
      `ZOTEUS_LOG_FORMAT must be text or json; got '${env.ZOTEUS_LOG_FORMAT}'.`,
      {
        field: 'ZOTEUS_LOG_FORMAT',
        hint: 'Set ZOTEUS_LOG_FORMAT=json for one JSON object a line, or unset it for text.',
      },
    );
  }
  const grace = (env.ZOTEUS_SHUTDOWN_GRACE_S ?? '').trim();
  if (grace !== '' && (!/^\d{1,6}$/.test(grace) || Number(grace) > 86_400)) {
    throw new ZoteusError(
      'validation_error',
      `ZOTEUS_SHUTDOWN_GRACE_S must be an integer from 0 to 86400; got '${env.ZOTEUS_SHUTDOWN_GRACE_S}'.`,
      {
        field: 'ZOTEUS_SHUTDOWN_GRACE_S',
        hint: `Fix or unset ZOTEUS_SHUTDOWN_GRACE_S (default ${DEFAULT_SHUTDOWN_GRACE_S}).`,
      },
    );
  }
  const token = env.ZOTEUS_METRICS_TOKEN?.trim();
  return {
    logFormat: format === 'json' ? 'json' : 'text',
    ...(token ? { metricsToken: token } : {}),
    shutdownGraceMs: (grace === '' ? DEFAULT_SHUTDOWN_GRACE_S : Number(grace)) * 1000,
  };
}

/** What a log line may say besides its text (the request line's fields, a refusal's level). */
export interface LogFields {
  level?: 'debug' | 'info' | 'warn' | 'error';
  request_id?: string;
  method?: string;
  tool?: string;
  outcome?: string;
  ms?: number;
}

export type LogWriter = (line: string, fields?: LogFields) => void;

/**
 * The server's one log writer: each line redacted (the redactor runs over the text and every
 * field), then written as it is (`text`) or as one JSON object (`json`).
 */
export function logWriter(
  format: LogFormat,
  redactor: () => Redactor,
  write: (text: string) => void,
  now: () => Date = () => new Date(),
): LogWriter {
  return (line, fields = {}) => {
    const redact = redactor();
    if (format === 'text') return write(redact(line));
    const { level = 'info', ...rest } = fields;
    const entry: Record<string, unknown> = { time: now().toISOString(), level, msg: redact(line) };
    for (const [name, value] of Object.entries(rest)) {
      if (value !== undefined) entry[name] = typeof value === 'string' ? redact(value) : value;
    }
    write(redact(JSON.stringify(entry)));
  };
}

/** Seconds; the upper bounds of the latency histograms. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

export interface ServerMetrics {
  /** One MCP request answered: its method, outcome (`ok` or an error code) and duration. */
  request(method: string, outcome: string, seconds: number): void;
  /** One `tools/call`: the tool (a name the server has, else `unknown`) and its outcome. */
  toolCall(tool: string, outcome: string): void;
  /** Given to the deps: every Zotero Web API answer and wait. */
  readonly upstream: UpstreamObserver;
  /** The exposition, with the gauges read now. */
  render(gauges: { sessions: number; inFlight: number }): string;
}

type Labels = Readonly<Record<string, string>>;

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(
    ([name, value]) => `${name}="${value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`,
  );
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

function number(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(6)));
}

class Counter {
  readonly #values = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  add(labels: Labels, by = 1): void {
    const key = labelText(labels);
    const entry = this.#values.get(key) ?? { labels, value: 0 };
    entry.value += by;
    this.#values.set(key, entry);
  }
  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const { labels, value } of this.#values.values())
      lines.push(`${this.name}${labelText(labels)} ${number(value)}`);
    return lines;
  }
}

class Histogram {
  readonly #series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {}
  observe(labels: Labels, value: number): void {
    const key = labelText(labels);
    const series = this.#series.get(key) ?? {
      labels,
      counts: this.buckets.map(() => 0),
      sum: 0,
      count: 0,
    };
    this.buckets.forEach((bound, index) => {
      if (value <= bound) series.counts[index]! += 1;
    });
    series.sum += value;
    series.count += 1;
    this.#series.set(key, series);
  }
  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const { labels, counts, sum, count } of this.#series.values()) {
      this.buckets.forEach((bound, index) =>
        lines.push(`${this.name}_bucket${labelText({ ...labels, le: String(bound) })} ${counts[index]}`),
      );
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: '+Inf' })} ${count}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${number(sum)}`);
      lines.push(`${this.name}_count${labelText(labels)} ${count}`);
    }
    return lines;
  }
}

function gauge(name: string, help: string, value: number): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${number(value)}`];
}

/** The counters of one server process (nothing module-level: two servers in one process keep their own). */
export function createMetrics(): ServerMetrics {
  const requests = new Counter('zoteus_mcp_requests_total', 'MCP requests answered, by method and outcome.');
  const calls = new Counter('zoteus_mcp_tool_calls_total', 'MCP tools/call requests, by tool and outcome.');
  const latency = new Histogram(
    'zoteus_mcp_request_duration_seconds',
    'Time to answer an MCP request, by method.',
    LATENCY_BUCKETS,
  );
  const zotero = new Counter(
    'zoteus_zotero_requests_total',
    'Zotero Web API answers by status class (failed: no answer).',
  );
  const limited = new Counter(
    'zoteus_zotero_rate_limited_total',
    'Zotero Web API answers 429 and 503, by status.',
  );
  const waited = new Counter(
    'zoteus_zotero_wait_seconds_total',
    'Seconds spent waiting before sending to the Zotero Web API again (Backoff, Retry-After, backoff).',
  );
  waited.add({}, 0);
  return {
    request(method, outcome, seconds) {
      requests.add({ method, outcome });
      latency.observe({ method }, seconds);
    },
    toolCall(tool, outcome) {
      calls.add({ tool, outcome });
    },
    upstream: {
      answered(status) {
        zotero.add({ status_class: `${Math.floor(status / 100)}xx` });
        if (status === 429 || status === 503) limited.add({ status: String(status) });
      },
      failed() {
        zotero.add({ status_class: 'failed' });
      },
      waited(ms) {
        waited.add({}, ms / 1000);
      },
    },
    render({ sessions, inFlight }) {
      const lines = [
        ...requests.render(),
        ...calls.render(),
        ...latency.render(),
        ...zotero.render(),
        ...limited.render(),
        ...waited.render(),
        ...gauge(
          'zoteus_mcp_sessions_active',
          'Sessions of the older (session-based) revisions open now.',
          sessions,
        ),
        ...gauge(
          'zoteus_http_requests_in_flight',
          'HTTP POST requests (MCP and sign-in) being answered now.',
          inFlight,
        ),
      ];
      return `${lines.join('\n')}\n`;
    },
  };
}

export interface Readiness {
  ready: boolean;
  reason?: string;
}

export interface OpsRoutes {
  metrics?: ServerMetrics;
  metricsToken?: string;
  /** The server runs with sign-in (then an untokened /metrics is for loopback only). */
  authenticated: boolean;
  /** The state database's answer (Deployment.ready); absent without one: ready. */
  ready?: () => Promise<Readiness>;
  /** A shutdown has begun: not ready any more. */
  draining(): boolean;
  gauges(): { sessions: number; inFlight: number };
  log: LogWriter;
}

/** The readiness, or not ready once `ms` have passed without it (a database that hangs). */
async function withinTimeout(ready: Promise<Readiness>, ms: number): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Readiness>((resolve) => {
    timer = setTimeout(
      () => resolve({ ready: false, reason: `the state database did not answer within ${ms / 1000} s` }),
      ms,
    );
  });
  try {
    return await Promise.race([ready, late]);
  } finally {
    clearTimeout(timer);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

function sameToken(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function fromLoopbackDirectly(req: IncomingMessage, loopback: (host: string) => boolean): boolean {
  const peer = req.socket.remoteAddress ?? '';
  return (
    loopback(peer) && req.headers.forwarded === undefined && req.headers['x-forwarded-for'] === undefined
  );
}

/** The paths of this file answered before any sign-in; false for every other path. */
export async function serveOps(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  routes: OpsRoutes,
  checks: { hostAllowed: boolean; loopback: (host: string) => boolean },
): Promise<boolean> {
  if (path !== HEALTH_PATH && path !== READY_PATH && path !== METRICS_PATH) return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendJson(res, 405, { error: `Method not allowed: ${path} answers GET.` }, { allow: 'GET, HEAD' });
    return true;
  }
  if (path === HEALTH_PATH) {
    sendJson(res, 200, { status: 'ok' });
    return true;
  }
  if (path === READY_PATH) {
    const readiness: Readiness = routes.draining()
      ? { ready: false, reason: 'the server is shutting down' }
      : routes.ready
        ? await withinTimeout(routes.ready(), READY_TIMEOUT_MS)
        : { ready: true };
    if (readiness.ready) sendJson(res, 200, { status: 'ready' });
    else sendJson(res, 503, { status: 'not_ready', reason: readiness.reason ?? 'not ready' });
    return true;
  }
  if (!routes.metrics) {
    sendJson(res, 404, { error: 'Not found: this server keeps no metrics.' });
    return true;
  }
  if (routes.metricsToken !== undefined) {
    const header = req.headers.authorization ?? '';
    const given = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    if (given === undefined || !sameToken(given, routes.metricsToken)) {
      routes.log('zoteus: mcp http refused /metrics without the metrics token (401)', { level: 'warn' });
      sendJson(
        res,
        401,
        { error: 'Unauthorized: /metrics needs Authorization: Bearer <ZOTEUS_METRICS_TOKEN>.' },
        { 'www-authenticate': 'Bearer realm="metrics"' },
      );
      return true;
    }
  } else if (!checks.hostAllowed || (routes.authenticated && !fromLoopbackDirectly(req, checks.loopback))) {
    routes.log('zoteus: mcp http refused /metrics to a client beyond loopback (403)', { level: 'warn' });
    sendJson(res, 403, {
      error:
        'Forbidden: with sign-in, /metrics answers only loopback clients that came through no proxy, unless ZOTEUS_METRICS_TOKEN is set (then send it as a bearer token).',
    });
    return true;
  }
  res.writeHead(200, {
    'content-type': 'text/plain; version=0.0.4; charset=utf-8',
    'cache-control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : routes.metrics.render(routes.gauges()));
  return true;
}
