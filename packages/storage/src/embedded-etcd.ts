/**
 * Runs a single-member etcd from PATH for the embedded default and for tests: data under a
 * directory of ours, client and peer URLs on free loopback ports.
 *
 * Secure by default (transport 'tls', as k3s serves its embedded etcd): both URLs are HTTPS and
 * take only clients presenting a certificate of the member's own CA (embedded-etcd-pki.ts), which
 * only this directory's owner can read; 'plain' (HTTP, no authentication: any local process could
 * read every Secret) exists for tests and benchmarks that ask for it.
 *
 * etcd dies with its parent: it is started under util-linux's `setpriv --pdeathsig KILL` (when
 * present), so a plinth killed with SIGKILL, or by the OOM killer, does not leave it holding the
 * data directory's lock. PR_SET_PDEATHSIG fires when the *thread* that forked the child ends:
 * Node's spawn forks from the calling thread, here the main thread, which lives as long as the
 * process (so this must not be called from a worker thread). Should one be left anyway, the next
 * start finds and stops it (embedded-etcd-leftovers.ts). Start-up has a deadline: an etcd that
 * does not answer in time is killed and start-up fails with its log's last lines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { accessSync, chmodSync, constants as fsConstants, fchmodSync, mkdirSync, openSync, readFileSync, writeFileSync, closeSync, rmSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { Etcd3 } from 'etcd3';
import { noop } from 'cockatiel';
import { ensureEtcdPki, type EtcdClientTLS } from './embedded-etcd-pki.js';
import { stopLeftoverEtcd } from './embedded-etcd-leftovers.js';

export type { EtcdClientTLS } from './embedded-etcd-pki.js';
export { DataDirInUseError } from './embedded-etcd-leftovers.js';

export interface EmbeddedEtcdOptions {
  /** Directory for etcd's data (created if missing); ports are remembered in it across restarts. */
  dataDir: string;
  /** etcd binary; default `etcd` from PATH. */
  binary?: string;
  /** How long etcd may take to start and answer, in ms (default 60 s). */
  startTimeoutMs?: number;
  /**
   * 'tls' (default): HTTPS with client-certificate authentication on both URLs. 'plain': HTTP,
   * open to every local process — only for tests and benchmarks that ask for it explicitly.
   */
  transport?: 'tls' | 'plain';
  /** Where progress and notices go (a leftover etcd stopped, a slow start). */
  log?: (message: string, fields: Record<string, unknown>) => void;
}

export interface EmbeddedEtcd {
  /** The client URL, e.g. `https://127.0.0.1:40123`. */
  readonly endpoint: string;
  /** What a client needs to connect (CA, client certificate and key); undefined with transport 'plain'. */
  readonly tls: EtcdClientTLS | undefined;
  readonly process: ChildProcess;
  /** Stops etcd (SIGTERM, then SIGKILL after a grace period) and waits for it to exit. */
  stop(): Promise<void>;
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

async function choosePorts(dataDir: string): Promise<{ client: number; peer: number }> {
  const file = join(dataDir, 'plinth-ports.json');
  try {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { client: number; peer: number };
    if ((await portIsFree(saved.client)) && (await portIsFree(saved.peer))) return saved;
  } catch {
    // first start, or unreadable: pick new ports
  }
  const ports = { client: await freePort(), peer: await freePort() };
  writeFileSync(file, JSON.stringify(ports));
  return ports;
}

const DEFAULT_START_TIMEOUT_MS = 60_000;

/** An executable named `name` on PATH (absolute), or undefined. */
function onPath(name: string): string | undefined {
  if (name.includes('/')) return resolve(name);
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      accessSync(file, fsConstants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

export async function startEmbeddedEtcd(opts: EmbeddedEtcdOptions): Promise<EmbeddedEtcd> {
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // Its member data, certificates and log are the server's alone, whatever the directory was.
  chmodSync(dataDir, 0o700);
  const log = opts.log ?? (() => undefined);
  const binary = onPath(opts.binary ?? 'etcd');
  if (!binary) throw new Error(`${opts.binary ?? 'etcd'} not found on PATH: install it (apt-get install -y etcd-server) or pass --etcd-servers`);
  await stopLeftoverEtcd(join(dataDir, 'member-data'), log);
  const pki = opts.transport === 'plain' ? undefined : ensureEtcdPki(join(dataDir, 'pki'));
  const run = { dataDir, binary, pki, log, startTimeoutMs: opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS };
  // A port found free can be taken by another process before etcd binds it: try fresh ports then.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(run);
    } catch (e) {
      if (!(e instanceof PortTakenError) || attempt >= 5) throw e;
      rmSync(join(dataDir, 'plinth-ports.json'), { force: true });
    }
  }
}

class PortTakenError extends Error {}

interface Run {
  dataDir: string;
  binary: string;
  pki: ReturnType<typeof ensureEtcdPki> | undefined;
  log: (message: string, fields: Record<string, unknown>) => void;
  startTimeoutMs: number;
}

let setprivPath: string | null | undefined;

/** The command that runs etcd: under `setpriv --pdeathsig KILL` when util-linux's setpriv is there. */
function commandFor(binary: string, args: string[]): [string, string[]] {
  if (setprivPath === undefined) setprivPath = onPath('setpriv') ?? null;
  return setprivPath ? [setprivPath, ['--pdeathsig', 'KILL', '--', binary, ...args]] : [binary, args];
}

/** The last lines of etcd's log, for an error message. */
function logTail(file: string): string {
  try {
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    return lines.slice(-3).join('\n');
  } catch {
    return '';
  }
}

async function startOnce(run: Run): Promise<EmbeddedEtcd> {
  const { client, peer } = await choosePorts(run.dataDir);
  const scheme = run.pki ? 'https' : 'http';
  const clientUrl = `${scheme}://127.0.0.1:${client}`;
  const peerUrl = `${scheme}://127.0.0.1:${peer}`;
  const logFile = join(run.dataDir, 'etcd.log');
  const logFd = openSync(logFile, 'a', 0o600);
  // A log written by an older plinth may have been created open to all.
  fchmodSync(logFd, 0o600);
  const tlsArgs = run.pki
    ? [
        `--cert-file=${run.pki.serverCertFile}`,
        `--key-file=${run.pki.serverKeyFile}`,
        `--trusted-ca-file=${run.pki.caFile}`,
        '--client-cert-auth',
        `--peer-cert-file=${run.pki.serverCertFile}`,
        `--peer-key-file=${run.pki.serverKeyFile}`,
        `--peer-trusted-ca-file=${run.pki.caFile}`,
        '--peer-client-cert-auth',
      ]
    : [];
  const [command, args] = commandFor(run.binary, [
    '--name=plinth',
    `--data-dir=${join(run.dataDir, 'member-data')}`,
    `--listen-client-urls=${clientUrl}`,
    `--advertise-client-urls=${clientUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=plinth=${peerUrl}`,
    '--initial-cluster-state=new',
    ...tlsArgs,
    '--log-level=warn',
    '--logger=zap',
  ]);
  const child = spawn(command, args, { stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let spawnError: Error | undefined;
  child.once('error', (e) => {
    spawnError = e;
  });

  const timeoutMs = run.startTimeoutMs;
  const deadline = Date.now() + timeoutMs;
  const tls = run.pki?.client;
  // No retries and no circuit breaker (which would fail every probe for seconds after three refused
  // connections): each probe asks once, and fails at its own deadline.
  const probe = new Etcd3({
    hosts: [clientUrl],
    dialTimeout: 1000,
    defaultCallOptions: () => ({ deadline: Date.now() + 2000 }),
    faultHandling: { host: () => noop, global: noop },
    ...(tls ? { credentials: { rootCertificate: tls.ca, certChain: tls.cert, privateKey: tls.key } } : {}),
  });
  let nextNotice = Date.now() + 10_000;
  try {
    for (;;) {
      if (spawnError) throw new Error(`etcd failed to start: ${spawnError.message}`);
      if (child.exitCode !== null || child.signalCode !== null) {
        const tail = logTail(logFile);
        if (/address already in use/.test(tail)) throw new PortTakenError('etcd port taken');
        throw new Error(`the embedded etcd exited (${child.exitCode ?? child.signalCode}) while starting; see ${logFile}${tail ? `:\n${tail}` : ''}`);
      }
      // Each probe has a deadline of its own: an etcd that accepts connections but never answers
      // (waiting on its data directory's lock) must not hold start-up forever.
      const left = deadline - Date.now();
      const answered = await Promise.race([
        probe
          .get('plinth-probe')
          .string()
          .then(() => true, () => false),
        new Promise<false>((r) => setTimeout(() => r(false), Math.max(0, Math.min(2000, left))).unref()),
      ]);
      if (answered) break;
      if (Date.now() >= deadline) {
        const tail = logTail(logFile);
        throw new Error(`the embedded etcd did not answer within ${Math.round(timeoutMs / 1000)} s (data directory ${run.dataDir}; see ${logFile}${tail ? `:\n${tail}` : ''})`);
      }
      if (Date.now() >= nextNotice) {
        run.log('still waiting for the embedded etcd to answer', { endpoint: clientUrl, dataDir: run.dataDir });
        nextNotice = Date.now() + 10_000;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (e) {
    child.kill('SIGKILL');
    await exited;
    throw e;
  } finally {
    probe.close();
  }

  return {
    endpoint: clientUrl,
    tls,
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
