/**
 * Clients that never read: the server's resident memory while N connections each ask for a list
 * of about M MB and read nothing (issue 23, point 7). Not part of `make bench` (it measures
 * memory, not throughput); run it by hand:
 *
 *   npx tsc -p bench && node bench/dist/slow-readers.js [--connections=40] [--list-mb=8]
 *     [--query=?resourceVersion=0] [--root=<another checkout, built>] [-- <plinth flags>]
 *
 * It starts its own etcd and the plinth executable of `--root` (default this checkout), stores the
 * list as ConfigMaps of 512 KiB, reads plinth's VmRSS before, at the peak while the clients stall,
 * and after they close their connections, and prints the figures.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { startBenchEtcd } from './lib/etcd.js';
import { KubeClient, parseKubeconfig } from './lib/http.js';
import { REPO_ROOT } from './lib/plinth.js';
import { procRssBytes } from './lib/proc.js';
import { sleep } from './lib/stats.js';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const own = dash >= 0 ? argv.slice(0, dash) : argv;
const plinthFlags = dash >= 0 ? argv.slice(dash + 1) : [];
const opt = (name: string, def: string): string => own.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? def;
const connections = Number(opt('connections', '40'));
const listMb = Number(opt('list-mb', '8'));
const query = opt('query', '');
const root = resolve(opt('root', REPO_ROOT));
const MB = 1024 * 1024;

async function main(): Promise<void> {
  const etcd = await startBenchEtcd();
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-slow-readers-'));
  const child = spawn(process.execPath, [join(root, 'packages/apiserver/bin/plinth-apiserver'), '--secure-port=0', '--bind-address=127.0.0.1', `--data-dir=${dataDir}`, `--etcd-servers=${etcd.endpoint}`, ...plinthFlags], { stdio: 'ignore' });
  const kubeconfig = join(dataDir, 'admin.kubeconfig');
  let client: KubeClient | undefined;
  for (let i = 0; i < 600 && !client; i++) {
    await sleep(100);
    if (!existsSync(kubeconfig)) continue;
    const c = new KubeClient(parseKubeconfig(readFileSync(kubeconfig, 'utf8')));
    if ((await c.request('GET', '/readyz').catch(() => ({ status: 0 }))).status === 200) client = c;
    else c.close();
  }
  if (!client) throw new Error('plinth did not start');
  const pid = child.pid!;
  try {
    await client.json('POST', '/api/v1/namespaces', Buffer.from(JSON.stringify({ metadata: { name: 'big' } })), [201, 409]);
    const value = 'x'.repeat(512 * 1024);
    const count = Math.round((listMb * MB) / value.length);
    for (let i = 0; i < count; i++) {
      await client.json('POST', '/api/v1/namespaces/big/configmaps', Buffer.from(JSON.stringify({ metadata: { name: `cm-${i}` }, data: { v: value } })), 201);
    }
    const path = `/api/v1/namespaces/big/configmaps${query}`;
    const listBytes = (await client.request('GET', path)).body.length;
    await sleep(2000);
    const before = procRssBytes(pid);
    const u = new URL(client.info.server);
    const sockets: TLSSocket[] = [];
    for (let i = 0; i < connections; i++) {
      // A client that sends its request and then never reads: the socket stays paused.
      const s = connect({ host: u.hostname, port: Number(u.port), ca: client.info.caPem, servername: 'localhost' });
      s.pause();
      s.on('error', () => undefined);
      s.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${client.info.token}\r\nAccept: application/json\r\n\r\n`);
      sockets.push(s);
    }
    let peak = before;
    for (let i = 0; i < 40; i++) {
      await sleep(250);
      peak = Math.max(peak, procRssBytes(pid));
    }
    const atEnd = procRssBytes(pid);
    for (const s of sockets) s.destroy();
    await sleep(3000);
    const after = procRssBytes(pid);
    const f = (b: number): string => `${(b / MB).toFixed(0)} MB`;
    console.log(`list ${f(listBytes)} (${count} ConfigMaps), ${connections} clients that never read, ${path}${plinthFlags.length ? ` [${plinthFlags.join(' ')}]` : ''}`);
    console.log(`plinth RSS: before ${f(before)}, peak over 10 s ${f(peak)} (+${f(peak - before)}, ${((peak - before) / connections / MB).toFixed(2)} MB per client), at 10 s ${f(atEnd)}, 3 s after the clients closed ${f(after)}`);
  } finally {
    client.close();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
    await etcd.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
