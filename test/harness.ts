/**
 * Test harness: a real etcd on free loopback ports, plinth in-process or as its real executable,
 * and a small HTTPS client that speaks to it with the admin token. Everything cleans up after itself.
 */
import { mkdtempSync, rmSync, existsSync, readFileSync, readdirSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Agent, request as httpsRequest } from 'node:https';
import { startEmbeddedEtcd, type EmbeddedEtcd } from '@plinth/storage';
import { startServer, parseFlags, createLogger, type RunningServer } from '@plinth/apiserver';
import { parse as parseYaml } from 'yaml';
import { before, after } from 'node:test';
import assert from 'node:assert/strict';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const EXECUTABLE = join(REPO_ROOT, 'packages/apiserver/bin/plinth-apiserver');

/** Every directory tempDir made in this process: removed when the process exits (each test file is one). */
const tempDirs = new Set<string>();

/** A new directory under the system's temporary directory, removed when the test process exits. */
export function tempDir(prefix = 'plinth-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (tempDirs.size === 0) process.once('exit', removeTempDirs);
  tempDirs.add(dir);
  return dir;
}

function removeTempDirs(): void {
  for (const dir of tempDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // A directory a still-running child holds open; the system's temporary directory keeps it.
    }
  }
  tempDirs.clear();
}

export interface TestEtcd {
  endpoint: string;
  dir: string;
  stop(): Promise<void>;
}

/**
 * A real etcd for tests, on plain HTTP loopback (explicitly: tests talk to it with raw etcd3
 * clients, and it starts faster without certificates). The executable's embedded etcd is TLS
 * with client certificates (test/embedded-etcd.test.ts).
 */
export async function startTestEtcd(): Promise<TestEtcd> {
  const dir = tempDir('plinth-etcd-');
  const etcd: EmbeddedEtcd = await startEmbeddedEtcd({ dataDir: dir, transport: 'plain' });
  return {
    endpoint: etcd.endpoint,
    dir,
    async stop() {
      await etcd.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  raw: Buffer;
  /** The body parsed as JSON (undefined when it is not JSON). */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body bytes (sent as is). */
  rawBody?: Buffer | string;
  headers?: Record<string, string>;
  /** Token to send; null sends none. Default: the admin token. */
  token?: string | null;
}

export class TestClient {
  readonly #agent: Agent;
  readonly #host: { hostname: string; port: string };
  readonly base: string;
  readonly token: string;

  constructor(base: string, caPem: string, token: string) {
    this.base = base;
    const u = new URL(base);
    this.#host = { hostname: u.hostname.replace(/^\[|\]$/g, ''), port: u.port };
    this.token = token;
    this.#agent = new Agent({ ca: caPem, keepAlive: true, maxSockets: 64 });
  }

  static fromKubeconfig(path: string): TestClient {
    const kc = parseYaml(readFileSync(path, 'utf8')) as {
      clusters: Array<{ cluster: { server: string; 'certificate-authority-data': string } }>;
      users: Array<{ user: { token: string } }>;
    };
    const cluster = kc.clusters[0]!.cluster;
    return new TestClient(cluster.server, Buffer.from(cluster['certificate-authority-data'], 'base64').toString(), kc.users[0]!.user.token);
  }

  request(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const token = opts.token === undefined ? this.token : opts.token;
    if (token) headers['authorization'] = `Bearer ${token}`;
    let payload: Buffer | undefined;
    if (opts.rawBody !== undefined) payload = Buffer.isBuffer(opts.rawBody) ? opts.rawBody : Buffer.from(opts.rawBody);
    else if (opts.body !== undefined) payload = Buffer.from(JSON.stringify(opts.body));
    if (payload && !headers['content-type']) headers['content-type'] = 'application/json';
    if (payload) headers['content-length'] = String(payload.length);
    return new Promise((resolveReq, reject) => {
      // The path goes out exactly as given (new URL() would resolve '..' and '%2e%2e').
      const req = httpsRequest({ hostname: this.#host.hostname, port: this.#host.port, path, method, headers, agent: this.#agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          let body: unknown;
          try {
            body = JSON.parse(raw.toString('utf8'));
          } catch {
            body = undefined;
          }
          resolveReq({ status: res.statusCode ?? 0, headers: res.headers, raw, body });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  get = (path: string, opts?: RequestOptions): Promise<Response> => this.request('GET', path, opts);
  post = (path: string, body: unknown, opts?: RequestOptions): Promise<Response> => this.request('POST', path, { ...opts, body });
  put = (path: string, body: unknown, opts?: RequestOptions): Promise<Response> => this.request('PUT', path, { ...opts, body });
  delete = (path: string, opts?: RequestOptions): Promise<Response> => this.request('DELETE', path, opts);

  /**
   * Opens a watch and collects events until `until` returns true for the events so far, or the
   * timeout passes. Resolves with the events.
   */
  watch(path: string, until: (events: any[]) => boolean, timeoutMs = 10_000): Promise<{ status: number; events: any[] }> {
    return new Promise((resolveW, reject) => {
      const req = httpsRequest(new URL(path, this.base), { method: 'GET', headers: { authorization: `Bearer ${this.token}` }, agent: this.#agent }, (res) => {
        const events: any[] = [];
        let buf = '';
        const finish = (): void => {
          clearTimeout(timer);
          req.destroy();
          resolveW({ status: res.statusCode ?? 0, events });
        };
        const timer = setTimeout(finish, timeoutMs);
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line) events.push(JSON.parse(line));
          }
          if (until(events)) finish();
        });
        res.on('end', finish);
      });
      req.on('error', (e) => {
        if ((e as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(e);
      });
      req.end();
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

export interface InProcessPlinth {
  server: RunningServer;
  client: TestClient;
  dataDir: string;
  stop(): Promise<void>;
}

/** plinth in this process, on a free port, against the given etcd (or an embedded one). */
export async function startInProcess(opts: { etcd?: TestEtcd; args?: string[] } = {}): Promise<InProcessPlinth> {
  const dataDir = tempDir('plinth-data-');
  const args = ['--secure-port=0', '--bind-address=127.0.0.1', `--data-dir=${dataDir}`, ...(opts.args ?? [])];
  if (opts.etcd) args.push(`--etcd-servers=${opts.etcd.endpoint}`);
  const server = await startServer(parseFlags(args), createLogger(-1, { write: () => true } as unknown as NodeJS.WritableStream));
  const client = TestClient.fromKubeconfig(server.kubeconfigPath);
  return {
    server,
    client,
    dataDir,
    async stop() {
      client.close();
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs `fn` against an in-process plinth on `etcd` started with `args`, stopping it afterwards. */
export async function withInProcess<T>(etcd: TestEtcd, args: string[], fn: (p: InProcessPlinth) => Promise<T>): Promise<T> {
  const p = await startInProcess({ etcd, args });
  try {
    return await fn(p);
  } finally {
    await p.stop();
  }
}

export interface PlinthProcess {
  child: ChildProcess;
  dataDir: string;
  kubeconfig: string;
  client: TestClient;
  /** The process's output so far (stdout and stderr). */
  output(): string;
  /** Sends SIGTERM and waits for the exit; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** The real executable, as `make run` starts it, on a free port in `dataDir`. */
export async function startProcess(dataDir: string, extraArgs: string[] = []): Promise<PlinthProcess> {
  const kubeconfig = join(dataDir, 'admin.kubeconfig');
  if (existsSync(kubeconfig)) unlinkSync(kubeconfig);
  const child = spawn(process.execPath, [EXECUTABLE, '--secure-port=0', '--bind-address=127.0.0.1', `--data-dir=${dataDir}`, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const deadline = Date.now() + 30_000;
  let client: TestClient | undefined;
  while (!client) {
    if (child.exitCode !== null) throw new Error(`plinth exited with ${child.exitCode}:\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`plinth did not become ready:\n${out}`);
    }
    if (existsSync(kubeconfig)) {
      const c = TestClient.fromKubeconfig(kubeconfig);
      try {
        if ((await c.get('/readyz')).status === 200) client = c;
        else c.close();
      } catch {
        c.close();
      }
    }
    if (!client) await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    dataDir,
    kubeconfig,
    client,
    output: () => out,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      client!.close();
      if (child.exitCode === null) child.kill(signal);
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** Polls `fn` until it returns a truthy value or the timeout passes. */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Sends SIGSTOP to `child` and waits until every one of its threads is stopped. kill() returns
 * once the signal is pending: on a busy machine a thread of a multi-threaded process (etcd's Go
 * runtime) may still run for milliseconds and answer a request sent in the meantime.
 */
export async function stopProcess(child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  const pid = child.pid!;
  child.kill('SIGSTOP');
  const deadline = Date.now() + timeoutMs;
  const stopped = (): boolean =>
    readdirSync(`/proc/${pid}/task`).every((t) => {
      try {
        // The state follows the command name in parentheses: `T` stopped, `t` traced.
        const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'latin1');
        const state = stat[stat.lastIndexOf(')') + 2];
        return state === 'T' || state === 't' || state === 'Z' || state === 'X';
      } catch {
        return true; // the thread exited
      }
    });
  while (!stopped()) {
    if (Date.now() > deadline) throw new Error(`process ${pid} not stopped within ${timeoutMs} ms of SIGSTOP`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** The kubectl to use: $KUBECTL, then .tools/bin/kubectl (from `make tools`), then PATH. */
export function kubectlPath(): string {
  if (process.env['KUBECTL']) return process.env['KUBECTL'];
  const local = join(REPO_ROOT, '.tools/bin/kubectl');
  return existsSync(local) ? local : 'kubectl';
}

/**
 * kubectl against a plinth process: `kubectl(...)` answers code and output, `ok(...)` its stdout
 * and fails the test (with the server's last log lines) when kubectl fails.
 */
export function kubectlOf(plinth: () => PlinthProcess): {
  kubectl(...args: string[]): { code: number; stdout: string; stderr: string };
  ok(...args: string[]): string;
} {
  const kubectl = (...args: string[]): { code: number; stdout: string; stderr: string } => {
    const r = spawnSync(kubectlPath(), ['--kubeconfig', plinth().kubeconfig, ...args], { encoding: 'utf8', timeout: 60_000 });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  const ok = (...args: string[]): string => {
    const r = kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}\n--- server log ---\n${plinth().output().slice(-2000)}`);
    return r.stdout;
  };
  return { kubectl, ok };
}

/**
 * A real etcd and an in-process plinth for the tests of one file: started in `before`, stopped in
 * `after`. Read `env.plinth` / `env.etcd` inside tests.
 */
export function usePlinth(args: string[] = []): { plinth: InProcessPlinth; etcd: TestEtcd } {
  const env = {} as { plinth: InProcessPlinth; etcd: TestEtcd };
  before(async () => {
    env.etcd = await startTestEtcd();
    env.plinth = await startInProcess({ etcd: env.etcd, args });
  });
  after(async () => {
    await env.plinth?.stop();
    await env.etcd?.stop();
  });
  return env;
}
