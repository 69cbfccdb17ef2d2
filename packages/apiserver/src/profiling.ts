/**
 * `/debug/pprof` (kube's routes.Profiling, `--profiling`, default true), for a Node process: Go's
 * pprof profiles do not exist here, so plinth serves what V8 can give without stopping the server:
 * - `/debug/pprof/` — an index of what is served (Go's index is an HTML page too);
 * - `/debug/pprof/profile?seconds=N` — a V8 CPU profile (`.cpuprofile` JSON, for Chrome DevTools
 *   or speedscope) sampled for N seconds (Go's default 30);
 * - `/debug/pprof/heap?seconds=N` — a V8 sampling heap profile (`.heapprofile` JSON) over N
 *   seconds (default 10): the allocations still live at the end, by stack. A full heap snapshot
 *   is not offered: writing one stops the event loop for seconds on a large heap;
 * - `/debug/pprof/cmdline` — the command line, NUL-separated, as Go's.
 * `/debug/pprof` redirects (302) to `/debug/pprof/`; any other name is Go's 404 `Unknown profile`.
 * One profile at a time (a second is 409 while one runs); N is at most 300 and the profile ends
 * early if the client goes away or the request times out. Sampling runs beside the requests being
 * served (V8's sampler thread); only encoding the result takes the event loop, briefly.
 * Authorized as non-resource URLs by the chain (`get` on `/debug/pprof/*`).
 */
import { Session } from 'node:inspector';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { writePlainError } from './logs-handler.js';

const MAX_SECONDS = 300;

/** Go's pprof serveError: plain text, with `X-Go-Pprof: 1`. */
function pprofError(res: ServerResponse, code: number, message: string): void {
  res.setHeader('X-Go-Pprof', '1');
  writePlainError(res, code, message);
}

const INDEX = `<html>
<head>
<title>/debug/pprof/</title>
</head>
<body>
/debug/pprof/<br>
<br>
Types of profiles available (plinth runs on Node.js: V8 profiles, not Go's):
<table>
<thead><td>Profile</td><td>Description</td></thead>
<tr><td><a href='cmdline'>cmdline</a></td><td>The command line invocation of the current program, NUL-separated.</td></tr>
<tr><td><a href='heap?seconds=10'>heap</a></td><td>A V8 sampling heap profile (.heapprofile JSON) of the allocations made during the given seconds (default 10) that are still live at the end.</td></tr>
<tr><td><a href='profile?seconds=30'>profile</a></td><td>A V8 CPU profile (.cpuprofile JSON) over the given seconds (default 30, at most ${MAX_SECONDS}). One profile runs at a time.</td></tr>
</table>
</body>
</html>
`;

/** Go's `seconds` parameter: a positive integer, else the default. */
function secondsOf(query: URLSearchParams, fallback: number): number {
  const v = query.get('seconds') ?? '';
  const n = /^[+-]?\d+$/.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

function post<T>(session: Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result as T))));
}

export interface ProfilingHandler {
  (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void>;
}

/** The /debug/pprof handler; one profile at a time in this process. */
export function createProfilingHandler(): ProfilingHandler {
  let running = false;

  /** Runs `start`, waits `seconds` (or until the client is gone), runs `stop`, sends its JSON. */
  const sample = async (res: ServerResponse, seconds: number, name: string, start: (s: Session) => Promise<void>, stop: (s: Session) => Promise<unknown>): Promise<void> => {
    if (running) return pprofError(res, 409, `Could not enable ${name} profiling: a profile is already being taken`);
    if (seconds > MAX_SECONDS) return pprofError(res, 400, `profile duration exceeds ${MAX_SECONDS} seconds`);
    running = true;
    const session = new Session();
    try {
      session.connect();
      await start(session);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, seconds * 1000);
        function done(): void {
          clearTimeout(timer);
          res.off('close', done);
          resolve();
        }
        res.on('close', done);
      });
      const result = await stop(session);
      if (res.destroyed || res.writableEnded || res.headersSent) return;
      const body = JSON.stringify(result);
      res.statusCode = 200;
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Content-Disposition', `attachment; filename="${name === 'CPU' ? 'profile.cpuprofile' : 'heap.heapprofile'}"`);
      res.end(body);
    } finally {
      session.disconnect();
      running = false;
    }
  };

  return async (req, res, path, query) => {
    if (path === '/debug/pprof') {
      // Go's http.Redirect: 302 with a short HTML body for GET.
      res.statusCode = 302;
      res.setHeader('Location', '/debug/pprof/');
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(req.method === 'GET' ? '<a href="/debug/pprof/">Found</a>.\n\n' : undefined);
      return;
    }
    const name = path.slice('/debug/pprof/'.length);
    switch (name) {
      case '':
        res.statusCode = 200;
        res.setHeader('Content-Type', 'text/html; charset=utf-8');
        res.setHeader('X-Content-Type-Options', 'nosniff');
        res.end(INDEX);
        return;
      case 'cmdline':
        res.statusCode = 200;
        res.setHeader('Content-Type', 'text/plain; charset=utf-8');
        res.setHeader('X-Content-Type-Options', 'nosniff');
        res.end(process.argv.join('\0'));
        return;
      case 'profile':
        return sample(
          res,
          secondsOf(query, 30),
          'CPU',
          async (s) => {
            await post(s, 'Profiler.enable');
            await post(s, 'Profiler.start');
          },
          async (s) => (await post<{ profile: unknown }>(s, 'Profiler.stop')).profile,
        );
      case 'heap':
        return sample(
          res,
          secondsOf(query, 10),
          'heap',
          async (s) => {
            await post(s, 'HeapProfiler.enable');
            await post(s, 'HeapProfiler.startSampling', { samplingInterval: 32768 });
          },
          async (s) => (await post<{ profile: unknown }>(s, 'HeapProfiler.stopSampling')).profile,
        );
      default:
        return pprofError(res, 404, 'Unknown profile');
    }
  };
}
