/**
 * The local cluster of deploy/local-cluster/cluster.sh for tests: 3 etcd members, 3 plinth
 * replicas and haproxy in a temporary directory, driven through the script itself (what an
 * operator runs), with clients through the load balancer and straight to each replica.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { Etcd3 } from 'etcd3';
import { REPO_ROOT, TestClient, tempDir } from './harness.js';

export const CLUSTER_SH = join(REPO_ROOT, 'deploy/local-cluster/cluster.sh');

export interface LocalClusterInfo {
  etcd: Array<{ name: string; pid: number; clientURL: string }>;
  apiservers: Array<{ pid: number; url: string }>;
  loadBalancer: { pid: number; url: string };
  etcdClientTLS: { ca: string; cert: string; key: string };
}

export interface LocalCluster {
  dir: string;
  /** Re-reads DIR/cluster.json (a stopped component has pid 0). */
  info(): LocalClusterInfo;
  /** DIR/kubeconfig: admin, through haproxy. */
  kubeconfig: string;
  /** The admin bearer token. */
  token: string;
  /** The serving CA (PEM). */
  caPem: string;
  /** Through haproxy. */
  lb: TestClient;
  /** Straight to replica i (0, 1, 2). */
  replica(i: number): TestClient;
  stopApiserver(i: number, signal?: NodeJS.Signals): Promise<void>;
  startApiserver(i: number): Promise<void>;
  stopEtcd(i: number): Promise<void>;
  startEtcd(i: number): Promise<void>;
  /** A raw etcd3 client with the client TLS, on all three members; closed by down(). */
  etcdClient(): Etcd3;
  /** cluster.sh down (idempotent); closes the clients. Removes the directory if the harness made it. */
  down(): Promise<void>;
}

/** Runs cluster.sh with the arguments; resolves with its output, rejects (with the output) on failure. */
export function clusterSh(args: string[], timeoutMs = 180_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLUSTER_SH, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE: process.execPath } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    // 'exit', not 'close': the processes it starts must not hold its pipes, but a slip there
    // should show as a failure of the test, not as a hang.
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`cluster.sh ${args.join(' ')} failed (${code ?? signal}):\n${out}`));
    });
  });
}

/**
 * Starts a cluster in `opts.dir` (default: a new temporary directory, removed by down()) with
 * `opts.args` as extra plinth-apiserver flags. Stop it with down() in `after`.
 */
export async function startLocalCluster(opts: { dir?: string; args?: string[] } = {}): Promise<LocalCluster> {
  const owned = !opts.dir;
  const dir = opts.dir ?? tempDir('plinth-cluster-');
  try {
    await clusterSh(['up', dir, ...(opts.args ? ['--', ...opts.args] : [])]);
  } catch (e) {
    // up stops what it started when it fails; down covers anything left from an earlier run.
    await clusterSh(['down', dir]).catch(() => undefined);
    if (owned) rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const info = (): LocalClusterInfo => JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as LocalClusterInfo;
  const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
  const caPem = readFileSync(join(dir, 'pki/ca.crt'), 'utf8');
  const first = info();
  const lb = new TestClient(first.loadBalancer.url, caPem, token);
  const replicas = first.apiservers.map((a) => new TestClient(a.url, caPem, token));
  let etcd: Etcd3 | undefined;
  let isDown = false;
  return {
    dir,
    info,
    kubeconfig: join(dir, 'kubeconfig'),
    token,
    caPem,
    lb,
    replica(i) {
      const c = replicas[i];
      if (!c) throw new Error(`no replica ${i}`);
      return c;
    },
    async stopApiserver(i, signal = 'SIGTERM') {
      await clusterSh(['stop-apiserver', dir, String(i), signal]);
    },
    async startApiserver(i) {
      await clusterSh(['start-apiserver', dir, String(i)]);
    },
    async stopEtcd(i) {
      await clusterSh(['stop-etcd', dir, String(i)]);
    },
    async startEtcd(i) {
      await clusterSh(['start-etcd', dir, String(i)]);
    },
    etcdClient() {
      if (!etcd) {
        const { etcd: members, etcdClientTLS: tls } = info();
        etcd = new Etcd3({
          hosts: members.map((m) => m.clientURL),
          credentials: { rootCertificate: readFileSync(tls.ca), certChain: readFileSync(tls.cert), privateKey: readFileSync(tls.key) },
        });
      }
      return etcd;
    },
    async down() {
      if (isDown) return;
      isDown = true;
      etcd?.close();
      lb.close();
      for (const r of replicas) r.close();
      await clusterSh(['down', dir]);
      // PLINTH_TEST_KEEP_CLUSTER=1 keeps the directory (logs, etcd data) to look into a failure.
      if (owned && !process.env.PLINTH_TEST_KEEP_CLUSTER) rmSync(dir, { recursive: true, force: true });
      else process.stderr.write(`cluster kept in ${dir}\n`);
    },
  };
}
