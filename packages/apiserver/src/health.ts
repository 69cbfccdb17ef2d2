/**
 * /healthz, /livez, /readyz with kube's output: `ok`, or per-check lines with `?verbose`, and
 * `exclude=<check>`. A failing check answers 500 (kube's code for a failed health check).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface HealthCheck {
  name: string;
  check(): Promise<void>;
}

/** Serves `/<endpoint>` (all checks) and `/<endpoint>/<check>`; `path` is the raw request path. */
export async function serveHealth(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, endpoint: string, checks: HealthCheck[]): Promise<void> {
  const excluded = new Set(query.getAll('exclude'));
  const single = checks.find((c) => `/${endpoint}/${c.name}` === path);
  const subject = path !== `/${endpoint}` ? (single ? [single] : undefined) : checks;
  if (!subject) {
    res.statusCode = 404;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end('404 page not found\n');
    return;
  }
  const lines: string[] = [];
  let failed = false;
  for (const c of subject) {
    if (excluded.has(c.name)) {
      lines.push(`[+]${c.name} excluded: ok`);
      continue;
    }
    try {
      await c.check();
      lines.push(`[+]${c.name} ok`);
    } catch {
      failed = true;
      // The reason is withheld from the client, as kube does; it is in the server's log.
      lines.push(`[-]${c.name} failed: reason withheld`);
    }
  }
  const verbose = query.has('verbose') || failed;
  let body: string;
  if (single) body = failed ? `internal server error: ${single.name} failed\n` : 'ok';
  else if (verbose) body = `${lines.join('\n')}\n${failed ? `${endpoint} check failed` : `${endpoint} check passed`}\n`;
  else body = 'ok';
  res.statusCode = failed ? 500 : 200;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(body);
}
