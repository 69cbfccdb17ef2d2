/**
 * The real plinth executable as a separate process (so its CPU and RSS can be read from /proc),
 * against a given etcd, on a free port, in a temporary data directory; as users run it: RBAC and
 * default admission (plinth's defaults), metrics, and audit at level Metadata into a file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient, parseKubeconfig } from './http.js';
import { sleep, withTimeout } from './stats.js';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const EXECUTABLE = join(REPO_ROOT, 'packages/apiserver/bin/plinth-apiserver');

export interface PlinthProcess {
  pid: number;
  client: KubeClient;
  /** --data-dir: certs/apiserver.{crt,key}, admin.kubeconfig, audit.log (with audit on). */
  dataDir: string;
  /** Milliseconds from spawn to /readyz answering 200. */
  startupMs: number;
  output(): string;
  stop(): Promise<void>;
}

export interface PlinthOptions {
  etcdEndpoint: string;
  /** --etcd-prefix (default /registry). */
  prefix?: string;
  extraArgs?: string[];
  /** Keep-alive sockets of the returned client. */
  maxSockets?: number;
  /**
   * How long to wait for /readyz 200 before killing the process and throwing (default 120 s).
   * Scenarios that expect a start-up to fail set a shorter one so the bench does not wait long.
   */
  readyTimeoutMs?: number;
  /** Extra environment (e.g. PLINTH_METRICS=off, which turns metrics recording off). */
  env?: Record<string, string>;
  /**
   * Audit at level Metadata for every request into audit.log in the data directory, as users run
   * it (default true); false starts plinth without audit flags.
   */
  audit?: boolean;
}

/** An audit policy recording every request at level Metadata. */
const AUDIT_POLICY = 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n';

export async function startPlinth(opts: PlinthOptions): Promise<PlinthProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-bench-'));
  const kubeconfig = join(dataDir, 'admin.kubeconfig');
  const auditArgs: string[] = [];
  if (opts.audit !== false) {
    writeFileSync(join(dataDir, 'audit-policy.yaml'), AUDIT_POLICY);
    auditArgs.push(`--audit-policy-file=${join(dataDir, 'audit-policy.yaml')}`, `--audit-log-path=${join(dataDir, 'audit.log')}`);
  }
  const args = [
    EXECUTABLE,
    '--secure-port=0',
    '--bind-address=127.0.0.1',
    `--data-dir=${dataDir}`,
    `--etcd-servers=${opts.etcdEndpoint}`,
    // No compaction during a run: a compaction would cost etcd CPU in the middle of some phase.
    '--etcd-compaction-interval=0',
    ...(opts.prefix ? [`--etcd-prefix=${opts.prefix}`] : []),
    ...auditArgs,
    ...(opts.extraArgs ?? []),
  ];
  const t0 = Date.now();
  // PLINTH_BENCH_NODE_ARGS adds node flags, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile.
  const nodeArgs = (process.env['PLINTH_BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...(opts.env ? { env: { ...process.env, ...opts.env } } : {}) });
  let out = '';
  const keep = (d: Buffer): void => {
    out += d.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;
  const deadline = Date.now() + readyTimeoutMs;
  // A failed start leaves neither a process nor its data directory behind.
  const fail = async (msg: string): Promise<never> => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`${msg}:\n${out}`);
  };
  let client: KubeClient | undefined;
  while (!client) {
    if (child.exitCode !== null) await fail(`plinth exited with ${child.exitCode}`);
    if (Date.now() > deadline) await fail(`plinth did not become ready within ${(readyTimeoutMs / 1000).toFixed(0)} s`);
    if (existsSync(kubeconfig)) {
      const c = new KubeClient(parseKubeconfig(readFileSync(kubeconfig, 'utf8')), opts.maxSockets ?? 64);
      try {
        // A probe never outlives the deadline (a busy or stuck server may not answer at all).
        const probeMs = Math.min(5000, Math.max(100, deadline - Date.now()));
        if ((await withTimeout(c.request('GET', '/readyz'), probeMs, 'GET /readyz')).status === 200) client = c;
        else c.close();
      } catch {
        c.close();
      }
    }
    if (!client) await sleep(100);
  }
  const startupMs = Date.now() - t0;
  const ready = client;
  return {
    pid: child.pid!,
    client: ready,
    dataDir,
    startupMs,
    output: () => out,
    async stop() {
      ready.close();
      if (child.exitCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates a namespace through plinth (201, or 409 when it exists). */
export async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  const body = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }));
  await client.json('POST', '/api/v1/namespaces', body, [201, 409]);
}
