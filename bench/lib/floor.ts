/**
 * The floor servers (bench/floor/server.ts) as processes of their own: the node:https floor and
 * the same handler in express 5, with plinth's certificate, key and admin token, on etcd under a
 * prefix of their own, through plinth's own etcd client (FastKV and its watch feed) or etcd3.
 * FLOOR_NODE_ARGS adds node flags (e.g. "--cpu-prof --cpu-prof-dir=DIR").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient } from './http.js';
import type { PlinthProcess } from './plinth.js';
import { withTimeout } from './stats.js';

const SERVER = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'floor', 'server.js');

export type FloorKind = 'floor' | 'express';
/** The floor's etcd client: plinth's hot-path one (FastKV) or the etcd3 library. */
export type FloorClient = 'fastkv' | 'etcd3';

export interface FloorProcess {
  kind: FloorKind;
  etcdClient: FloorClient;
  pid: number;
  client: KubeClient;
  /** Hands the floor the bytes it answers every GET with. */
  setGetBody(body: Buffer): Promise<void>;
  output(): string;
  stop(): Promise<void>;
}

export interface FloorOptions {
  kind: FloorKind;
  /** Default fastkv: the floor issue 28 §2 measures plinth against. */
  etcdClient?: FloorClient;
  etcdEndpoint: string;
  /** The plinth whose certificate, key and admin token the floor uses. */
  plinth: PlinthProcess;
  /** Where the floor keeps its objects in etcd (plinth's layout beneath it). */
  prefix: string;
  maxSockets?: number;
}

/** Starts a floor process and waits until it listens (its output is kept for errors). */
export async function startFloor(opts: FloorOptions): Promise<FloorProcess> {
  const nodeArgs = (process.env['FLOOR_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
  const etcdClient = opts.etcdClient ?? 'fastkv';
  const name = `${opts.kind} floor (${etcdClient})`;
  const args = [SERVER, `--client=${etcdClient}`, ...(opts.kind === 'express' ? ['--express'] : [])];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, ...args], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: {
      ...process.env,
      FLOOR_CERT: join(opts.plinth.dataDir, 'certs', 'apiserver.crt'),
      FLOOR_KEY: join(opts.plinth.dataDir, 'certs', 'apiserver.key'),
      FLOOR_TOKEN: opts.plinth.client.info.token,
      FLOOR_ETCD: opts.etcdEndpoint,
      FLOOR_PREFIX: opts.prefix,
    },
  });
  let out = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = await withTimeout(
    new Promise<number>((resolvePort, reject) => {
      const keep = (d: Buffer): void => {
        out += d.toString();
        if (out.length > 100_000) out = out.slice(-50_000);
        const m = /floor listening on (\d+)/.exec(out);
        if (m) resolvePort(Number(m[1]));
      };
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      child.once('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${out}`)));
    }),
    30_000,
    `${name} start`,
  ).catch(async (e: unknown) => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
    throw e;
  });
  // The plinth's certificate names 127.0.0.1, so the same CA verifies the floor.
  const client = new KubeClient({ ...opts.plinth.client.info, server: `https://127.0.0.1:${port}` }, opts.maxSockets ?? 64);
  return {
    kind: opts.kind,
    etcdClient,
    pid: child.pid!,
    client,
    setGetBody: (body) =>
      withTimeout(
        new Promise<void>((resolveSet) => {
          child.once('message', () => resolveSet());
          child.send({ getBody: body.toString('base64') });
        }),
        10_000,
        `${name}: GET body`,
      ),
    output: () => out,
    async stop() {
      client.close();
      if (child.exitCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}
