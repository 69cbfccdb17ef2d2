/**
 * The hollow cluster's HTTPS client: one identity (bearer token) and one user agent per actor, a
 * shared keep-alive Agent (plinth serves HTTP/1.1 only, so sockets are bounded per Agent), an
 * optional token-bucket rate limit (client-go's QPS/burst), and client-side latency recorded per
 * (verb, resource, subresource, scope) as kube's apiserver labels `apiserver_request_duration_seconds`.
 */
import { Agent, request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';

/** client-go's default user agent for kube 1.24.0 (rest/config.go DefaultKubernetesUserAgent). */
export function kubeUserAgent(binary: string, suffix?: string): string {
  return `${binary}/v1.24.0 (linux/amd64) kubernetes/4ce5a89${suffix ? `/${suffix}` : ''}`;
}

/** Where plinth is and the CA that signs its serving certificate. */
export interface ServerInfo {
  server: string;
  caPem: string;
}

/** One answer: status and parsed JSON body (undefined when the body is not JSON). */
export interface Reply<T = unknown> {
  status: number;
  body: T;
}

/** Latency samples (ms) per request key `VERB resource[/subresource] scope`. */
export class LatencyRecorder {
  readonly samples = new Map<string, number[]>();
  errors = 0;

  add(key: string, ms: number): void {
    let s = this.samples.get(key);
    if (!s) this.samples.set(key, (s = []));
    s.push(ms);
  }
}

/**
 * kube's request labels for a path (apiserver metrics.go CleanVerb/CleanScope, 1.24): a GET
 * without a name is a LIST; the scope is `resource` with a name or for a create, `namespace` with a
 * namespace, else `cluster`.
 */
export function requestKey(method: string, path: string): string {
  const q = path.indexOf('?');
  const parts = (q >= 0 ? path.slice(0, q) : path).split('/').filter(Boolean);
  // /api/v1/... or /apis/<group>/<version>/...
  let i = parts[0] === 'api' ? 2 : 3;
  let namespaced = false;
  if (parts[i] === 'namespaces' && parts.length > i + 2) {
    namespaced = true;
    i += 2;
  }
  const resource = parts[i] ?? '';
  const name = parts[i + 1];
  const sub = parts[i + 2];
  let verb = method;
  if (method === 'GET' && name === undefined) verb = 'LIST';
  if (method === 'DELETE' && name === undefined) verb = 'DELETECOLLECTION';
  const scope = name !== undefined || method === 'POST' ? 'resource' : namespaced ? 'namespace' : 'cluster';
  return `${verb} ${resource}${sub ? `/${sub}` : ''} ${scope}`;
}

/** client-go's flowcontrol token bucket: `qps` tokens a second, at most `burst` saved. */
export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  #tokens: number;
  #last = performance.now();
  #waiters: Array<() => void> = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(qps: number, burst: number) {
    this.#qps = qps;
    this.#burst = burst;
    this.#tokens = burst;
  }

  take(): Promise<void> {
    this.#refill();
    if (this.#waiters.length === 0 && this.#tokens >= 1) {
      this.#tokens -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
      this.#schedule();
    });
  }

  #refill(): void {
    const now = performance.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#last) / 1000) * this.#qps);
    this.#last = now;
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#refill();
      while (this.#waiters.length && this.#tokens >= 1) {
        this.#tokens -= 1;
        this.#waiters.shift()!();
      }
      if (this.#waiters.length) this.#schedule();
    }, Math.max(1, Math.ceil(1000 / this.#qps)));
  }
}

/** One actor's identity and transport. */
export interface HollowClientOptions {
  info: ServerInfo;
  token: string;
  userAgent: string;
  /** Shared keep-alive Agent for unary calls (bounded sockets). */
  agent: Agent;
  recorder: LatencyRecorder;
  /** client-go QPS/burst; none = unlimited (kubelet's heartbeat client). */
  limit?: TokenBucket;
}

/** An actor's client. */
export interface HollowClient {
  readonly userAgent: string;
  readonly info: ServerInfo;
  readonly token: string;
  /** A request; JSON bodies; latency recorded under its kube key. */
  call<T = unknown>(method: string, path: string, body?: unknown, contentType?: string): Promise<Reply<T>>;
  /** `call` that throws unless the status is one of `ok`. */
  must<T = unknown>(method: string, path: string, body: unknown, ok: number[], contentType?: string): Promise<T>;
}

/** A client of one actor: its token, user agent, shared Agent and rate limit. */
export function createHollowClient(opts: HollowClientOptions): HollowClient {
  const base = new URL(opts.info.server);
  const auth = `Bearer ${opts.token}`;
  const send = (method: string, path: string, payload: Buffer | undefined, contentType: string): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = { authorization: auth, accept: 'application/json', 'user-agent': opts.userAgent };
      if (payload) {
        headers['content-type'] = contentType;
        headers['content-length'] = String(payload.length);
      }
      const req = httpsRequest({ hostname: base.hostname, port: base.port, path, method, headers, agent: opts.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = text;
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on('error', reject);
      });
      req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path}: no answer in 60 s`)));
      req.on('error', reject);
      req.end(payload);
    });
  const client: HollowClient = {
    userAgent: opts.userAgent,
    info: opts.info,
    token: opts.token,
    async call<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Reply<T>> {
      if (opts.limit) await opts.limit.take();
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const t0 = performance.now();
      try {
        const r = await send(method, path, payload, contentType);
        opts.recorder.add(requestKey(method, path), performance.now() - t0);
        return r as Reply<T>;
      } catch (e) {
        opts.recorder.errors++;
        throw e;
      }
    },
    async must<T>(method: string, path: string, body: unknown, ok: number[], contentType?: string): Promise<T> {
      const r = await client.call<T>(method, path, body, contentType);
      if (!ok.includes(r.status)) throw new Error(`${opts.userAgent}: ${method} ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      return r.body;
    },
  };
  return client;
}
