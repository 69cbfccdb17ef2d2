/**
 * Pressure the seeded fuzz suite (fuzz.test.ts) applies besides its requests, and what it watches
 * while applying it:
 * - slow clients: a few connections that send a request body one byte at a time, and a few that
 *   ask for a large response and never read it. A bounded number (far below the server's seats),
 *   ended by the suite itself at the end of the run;
 * - a probe: a client of its own (no shared sockets) that asks `/readyz` and a GET every interval
 *   while all of it runs; each must be answered 200 within its deadline;
 * - the prototypes of the process (the server runs in it): `Object.prototype`, `Array.prototype`
 *   and `Function.prototype` must keep exactly the members they had, none enumerable.
 */
import { Agent, request as httpsRequest } from 'node:https';
import { connect, type TLSSocket } from 'node:tls';

// ---------------------------------------------------------------------------------------------
// Prototypes
// ---------------------------------------------------------------------------------------------

const PROTOTYPES: Array<[string, object]> = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
];

/** Remembers the prototypes' members now; `damage()` then reports (and undoes) any change. */
export function watchPrototypes(): { damage(): string | undefined } {
  const baseline = new Map(PROTOTYPES.map(([name, p]) => [name, new Set(Object.getOwnPropertyNames(p))]));
  return {
    damage() {
      const found: string[] = [];
      for (const [name, p] of PROTOTYPES) {
        const base = baseline.get(name)!;
        const names = Object.getOwnPropertyNames(p);
        const added = names.filter((k) => !base.has(k));
        const enumerable = Object.keys(p);
        if (added.length === 0 && enumerable.length === 0 && names.length === base.size) continue;
        found.push(`${name} changed: added ${JSON.stringify(added)}, enumerable ${JSON.stringify(enumerable)}`);
        // Undone, so the rest of the run is not judged on a polluted process.
        for (const k of added) delete (p as Record<string, unknown>)[k];
      }
      return found.length > 0 ? found.join('; ') : undefined;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Slow clients
// ---------------------------------------------------------------------------------------------

export interface SlowClientOptions {
  host: string;
  port: number;
  ca: string;
  token: string;
  /** Connections sending a body one byte per `trickleMs`. */
  tricklers: number;
  /** Connections that request `largePath` and never read the answer. */
  nonReaders: number;
  largePath: string;
  trickleMs?: number;
}

export interface SlowClients {
  /** Resolves once every connection is open and has sent its request line and headers. */
  ready: Promise<void>;
  /** Ends every connection; the report says how far each got. */
  stop(): { tricklers: number; bytesTrickled: number; nonReaders: number; answeredEarly: string[] };
}

/** Opens the slow connections (raw TLS: nothing reads or buffers for them). */
export function startSlowClients(o: SlowClientOptions): SlowClients {
  const sockets: TLSSocket[] = [];
  const timers: NodeJS.Timeout[] = [];
  const answeredEarly: string[] = [];
  let bytesTrickled = 0;
  const open = (what: string, head: string, onOpen: (s: TLSSocket) => void): Promise<void> =>
    new Promise((resolve, reject) => {
      const s = connect({ host: o.host, port: o.port, ca: o.ca, servername: 'localhost', checkServerIdentity: () => undefined }, () => {
        s.write(head, () => resolve());
        onOpen(s);
      });
      s.on('error', (e) => {
        if (!s.destroyed) answeredEarly.push(`${what}: ${e.message}`);
        reject(e);
      });
      sockets.push(s);
    });
  const opened: Array<Promise<void>> = [];
  const bodyLength = 100_000;
  for (let i = 0; i < o.tricklers; i++) {
    const head = [
      'POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews HTTP/1.1',
      `Host: ${o.host}:${o.port}`,
      `Authorization: Bearer ${o.token}`,
      'Content-Type: application/json',
      `Content-Length: ${bodyLength}`,
      '',
      '',
    ].join('\r\n');
    opened.push(
      open(`trickler ${i}`, head, (s) => {
        // Whatever the server answers before the body is complete is noted (not a failure).
        s.once('data', (d: Buffer) => answeredEarly.push(`trickler ${i}: ${d.toString('latin1').split('\r\n')[0]}`));
        const t = setInterval(() => {
          if (s.destroyed || s.writableEnded) return;
          s.write(' ');
          bytesTrickled++;
        }, o.trickleMs ?? 200);
        timers.push(t);
      }),
    );
  }
  for (let i = 0; i < o.nonReaders; i++) {
    const head = [`GET ${o.largePath} HTTP/1.1`, `Host: ${o.host}:${o.port}`, `Authorization: Bearer ${o.token}`, 'Accept: application/json', '', ''].join('\r\n');
    // Paused at once: the answer fills the socket buffers and then waits in the server.
    opened.push(open(`non-reader ${i}`, head, (s) => s.pause()));
  }
  return {
    ready: Promise.all(opened).then(() => undefined),
    stop() {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
      return { tricklers: o.tricklers, bytesTrickled, nonReaders: o.nonReaders, answeredEarly };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The probe
// ---------------------------------------------------------------------------------------------

export interface ProbeOptions {
  host: string;
  port: number;
  ca: string;
  token: string;
  /** Paths asked each round (GET, must be 200). */
  paths: string[];
  intervalMs: number;
  deadlineMs: number;
}

export interface Probe {
  /** Asks every path once now; resolves with what failed (empty: all answered in time). */
  once(): Promise<string[]>;
  /** Stops the periodic rounds; resolves with every failure seen and the rounds run. */
  stop(): Promise<{ rounds: number; slowest: number; failures: string[] }>;
}

/** Asks `paths` every `intervalMs` on connections of its own, each within `deadlineMs`. */
export function startProbe(o: ProbeOptions): Probe {
  const failures: string[] = [];
  let rounds = 0;
  let slowest = 0;
  const ask = (path: string): Promise<string | undefined> =>
    new Promise((resolve) => {
      const started = Date.now();
      // A new agent each time: the probe shares no socket with anyone, not even itself.
      const agent = new Agent({ ca: o.ca, keepAlive: false });
      const done = (why?: string): void => {
        clearTimeout(timer);
        agent.destroy();
        slowest = Math.max(slowest, Date.now() - started);
        resolve(why);
      };
      const req = httpsRequest({ host: o.host, port: o.port, path, method: 'GET', agent, headers: { authorization: `Bearer ${o.token}` } }, (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode === 200 ? undefined : `GET ${path}: ${res.statusCode}`));
      });
      const timer = setTimeout(() => {
        req.destroy();
        done(`GET ${path}: no answer within ${o.deadlineMs} ms`);
      }, o.deadlineMs);
      req.on('error', (e) => done(`GET ${path}: ${e.message}`));
      req.end();
    });
  const once = async (): Promise<string[]> => {
    rounds++;
    const found = (await Promise.all(o.paths.map(ask))).filter((x): x is string => x !== undefined);
    failures.push(...found);
    return found;
  };
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(once);
  }, o.intervalMs);
  return {
    once,
    async stop() {
      clearInterval(timer);
      await running;
      return { rounds, slowest, failures };
    },
  };
}
