/**
 * Runs a single-member etcd from PATH for the embedded default and for tests: data under a
 * directory of ours, client and peer ports free on loopback, stopped with its parent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync, openSync, readFileSync, writeFileSync, closeSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';

export interface EmbeddedEtcdOptions {
  /** Directory for etcd's data (created if missing); ports are remembered in it across restarts. */
  dataDir: string;
  /** etcd binary; default `etcd` from PATH. */
  binary?: string;
  /** How long to wait for the member to answer, in ms. */
  startTimeoutMs?: number;
}

export interface EmbeddedEtcd {
  /** The client URL, e.g. `http://127.0.0.1:40123`. */
  readonly endpoint: string;
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

export async function startEmbeddedEtcd(opts: EmbeddedEtcdOptions): Promise<EmbeddedEtcd> {
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  // A port found free can be taken by another process before etcd binds it: try fresh ports then.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (e) {
      if (!(e instanceof PortTakenError) || attempt >= 5) throw e;
      rmSync(join(opts.dataDir, 'plinth-ports.json'), { force: true });
    }
  }
}

class PortTakenError extends Error {}

async function startOnce(opts: EmbeddedEtcdOptions): Promise<EmbeddedEtcd> {
  const { client, peer } = await choosePorts(opts.dataDir);
  const clientUrl = `http://127.0.0.1:${client}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const logFd = openSync(join(opts.dataDir, 'etcd.log'), 'a');
  const child = spawn(
    opts.binary ?? 'etcd',
    [
      '--name=plinth',
      `--data-dir=${join(opts.dataDir, 'member-data')}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=plinth=${peerUrl}`,
      '--initial-cluster-state=new',
      '--log-level=warn',
      '--logger=zap',
    ],
    { stdio: ['ignore', logFd, logFd] },
  );
  closeSync(logFd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let spawnError: Error | undefined;
  child.once('error', (e) => {
    spawnError = e;
  });

  const deadline = Date.now() + (opts.startTimeoutMs ?? 20_000);
  const probe = new Etcd3({ hosts: [clientUrl], dialTimeout: 1000 });
  try {
    for (;;) {
      if (spawnError) {
        throw new Error(
          (spawnError as NodeJS.ErrnoException).code === 'ENOENT'
            ? `etcd not found on PATH: install it (apt-get install -y etcd-server) or pass --etcd-servers`
            : `etcd failed to start: ${spawnError.message}`,
        );
      }
      if (child.exitCode !== null) {
        const log = readFileSync(join(opts.dataDir, 'etcd.log'), 'utf8');
        if (/address already in use/.test(log.slice(-4000))) throw new PortTakenError('etcd port taken');
        throw new Error(`etcd exited with code ${child.exitCode}; see ${join(opts.dataDir, 'etcd.log')}`);
      }
      try {
        await probe.get('plinth-probe').string();
        break;
      } catch {
        if (Date.now() > deadline) throw new Error(`etcd did not answer within ${opts.startTimeoutMs ?? 20_000} ms; see ${join(opts.dataDir, 'etcd.log')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  } finally {
    probe.close();
  }

  return {
    endpoint: clientUrl,
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
