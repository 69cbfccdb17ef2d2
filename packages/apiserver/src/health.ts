/**
 * /healthz (deprecated), /livez and /readyz as kube-apiserver 1.24 serves them (apiserver's
 * healthz package): `ok`, or one line per check with `?verbose` and on failure; `?exclude=<check>`
 * (repeatable); `/<endpoint>/<check>` for one check. A failed check answers 500 and withholds its
 * reason from the client (these endpoints are public); the reason goes to the server log.
 *
 * The checks, in kube's order: `ping`, `log`, `etcd`, then on /readyz `informer-sync`, then
 * `poststarthook/<name>` for each start-up hook (failing with "not finished" until it has run;
 * on /livez they pass during --livez-grace-period, kube's delayed boot-sequence checks), and on
 * /readyz `shutdown` last.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from './log.js';

export interface HealthCheck {
  name: string;
  /** Resolves when healthy; throws (or rejects) with the reason otherwise. */
  check(): Promise<void> | void;
}

/** The checks of each endpoint, in the order they are run and printed. */
export interface HealthEndpoints {
  healthz: readonly HealthCheck[];
  livez: readonly HealthCheck[];
  readyz: readonly HealthCheck[];
}

export interface HealthEndpointsDeps {
  /** ping, log, etcd: on all three endpoints, never delayed (kube's Config.AddHealthChecks). */
  base: readonly HealthCheck[];
  /** Readyz-only checks after the base ones (kube: informer-sync). */
  readyOnly: readonly HealthCheck[];
  /** Start-up hook names, in listing order, and whether each has run. */
  hooks: readonly string[];
  hookDone(name: string): boolean;
  /** Epoch ms until which /livez treats the hook checks as passing (kube's --livez-grace-period). */
  livezGraceUntil: number;
  isShuttingDown(): boolean;
}

const ping: HealthCheck = { name: 'ping', check: () => undefined };
/** plinth's logger writes synchronously: it cannot be blocked the way klog's flush can. */
const logCheck: HealthCheck = { name: 'log', check: () => undefined };
export const DEFAULT_HEALTH_CHECKS: readonly HealthCheck[] = [ping, logCheck];

/** kube's postStartHookHealthz: fails with "not finished" until the hook has run. */
export function postStartHookCheck(name: string, done: () => boolean): HealthCheck {
  return {
    name: `poststarthook/${name}`,
    check: () => {
      if (!done()) throw new Error('not finished');
    },
  };
}

/** kube's delayedHealthCheck: passes until `until` (epoch ms), then runs the check. */
export function delayedCheck(c: HealthCheck, until: number): HealthCheck {
  if (until <= Date.now()) return c;
  return { name: c.name, check: () => (Date.now() > until ? c.check() : undefined) };
}

/** The three endpoints' check lists (built once; each request only runs them). */
export function healthEndpoints(d: HealthEndpointsDeps): HealthEndpoints {
  const hooks = d.hooks.map((h) => postStartHookCheck(h, () => d.hookDone(h)));
  const shutdown: HealthCheck = {
    name: 'shutdown',
    check: () => {
      if (d.isShuttingDown()) throw new Error('process is shutting down');
    },
  };
  return {
    healthz: [...d.base, ...hooks],
    livez: [...d.base, ...hooks.map((c) => delayedCheck(c, d.livezGraceUntil))],
    readyz: [...d.base, ...d.readyOnly, ...hooks, shutdown],
  };
}

function reasonOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Go's http.Error: plain text, nosniff, the message and a newline. */
function plainError(res: ServerResponse, code: number, message: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
  res.end(`${message}\n`);
}

/**
 * Serves `/<endpoint>` (all its checks) and `/<endpoint>/<check>` (one, by its full name — which
 * may hold slashes, e.g. `poststarthook/rbac/bootstrap-roles`); `path` is the request path.
 */
export async function serveHealth(_req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, endpoint: string, checks: readonly HealthCheck[], log?: Logger): Promise<void> {
  if (path.length > endpoint.length + 1) {
    const name = path.slice(endpoint.length + 2);
    const single = checks.find((c) => c.name === name);
    if (!single) {
      plainError(res, 404, '404 page not found');
      return;
    }
    try {
      await single.check();
    } catch (e) {
      // kube's adaptCheckToHandler: the reason, to those allowed this path (system:monitoring).
      plainError(res, 500, `internal server error: ${reasonOf(e)}`);
      return;
    }
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end('ok');
    return;
  }
  const excluded = new Set(query.getAll('exclude'));
  let out = '';
  let failed: string[] | undefined;
  let reasons = '';
  for (const c of checks) {
    if (excluded.delete(c.name)) {
      out += `[+]${c.name} excluded: ok\n`;
      continue;
    }
    try {
      await c.check();
      out += `[+]${c.name} ok\n`;
    } catch (e) {
      // The reason is withheld from the client, as kube does; it goes to the log.
      out += `[-]${c.name} failed: reason withheld\n`;
      reasons += `[-]${c.name} failed: ${reasonOf(e)}\n`;
      (failed ??= []).push(c.name);
    }
  }
  if (excluded.size > 0) {
    const names = [...excluded].sort().map((n) => JSON.stringify(n)).join(',');
    out += `warn: some health checks cannot be excluded: no matches for ${names}\n`;
    log?.info('cannot exclude some health checks, no health checks are installed matching', { endpoint, names: [...excluded].sort() });
  }
  if (failed) {
    log?.v(2, `${failed.join(',')} check failed: ${endpoint}`, { endpoint, failed: reasons.trimEnd().split('\n') });
    plainError(res, 500, `${out}${endpoint} check failed`);
    return;
  }
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(query.has('verbose') ? `${out}${endpoint} check passed\n` : 'ok');
}
