#!/usr/bin/env node
// Small helpers for cluster.sh that bash cannot do well alone: free loopback ports, HTTPS probes
// with client certificates, and the JSON/YAML files the cluster writes. Node built-ins only.
//
//   helper.mjs free-ports N                  N distinct free loopback ports, one a line
//   helper.mjs busy-ports P...               the given ports that cannot be bound now (exit 1 if any)
//   helper.mjs wait [opts] URL...            waits until every URL answers 200 (exit 1 on timeout)
//   helper.mjs probe [opts] URL              prints "<status> <first line of the body>" (or the error)
//   helper.mjs write-state DIR               writes DIR/cluster.json and DIR/kubeconfig
// opts: --ca FILE --cert FILE --key FILE --timeout SECONDS --any (any HTTP answer counts)
//       --match REGEX (a 200 counts only when the body matches)
//       --pids P,Q (wait fails at once, exit 3, when one of these processes has exited)
import { createServer } from 'node:net';
import { request } from 'node:https';
import { readFileSync, writeFileSync, existsSync, renameSync, chmodSync } from 'node:fs';
import { join, resolve } from 'node:path';

const [cmd, ...rest] = process.argv.slice(2);

function bind(port) {
  return new Promise((res) => {
    const s = createServer();
    s.once('error', () => res(undefined));
    s.listen({ port, host: '127.0.0.1', exclusive: true }, () => res(s));
  });
}

async function freePorts(n) {
  // Every socket stays open until all are bound, so the ports are distinct.
  const servers = [];
  for (let i = 0; i < n; i++) {
    const s = await bind(0);
    if (!s) throw new Error('cannot bind a loopback port');
    servers.push(s);
  }
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

function parseOpts(args) {
  const o = { urls: [], timeout: 30, any: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--ca') o.ca = readFileSync(args[++i]);
    else if (a === '--cert') o.cert = readFileSync(args[++i]);
    else if (a === '--key') o.key = readFileSync(args[++i]);
    else if (a === '--timeout') o.timeout = Number(args[++i]);
    else if (a === '--any') o.any = true;
    else if (a === '--pids') o.pids = args[++i].split(',').filter(Boolean).map(Number);
    else if (a === '--match') o.match = new RegExp(args[++i], 'm');
    else o.urls.push(a);
  }
  return o;
}

function get(url, o) {
  return new Promise((res) => {
    const req = request(url, { ca: o.ca, cert: o.cert, key: o.key, timeout: 2000 }, (r) => {
      let body = '';
      r.setEncoding('utf8');
      r.on('data', (c) => (body += c));
      r.on('end', () => res({ status: r.statusCode, body }));
      r.on('error', (e) => res({ status: 0, body: String(e.message) }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out after 2 s')));
    req.on('error', (e) => res({ status: 0, body: e.code ?? e.message }));
    req.end();
  });
}

/** The process runs: not gone, not a zombie (its parent may not have reaped it yet). */
function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

const ok = (r, o) => (o.any ? r.status > 0 : r.status === 200 && (!o.match || o.match.test(r.body)));

async function waitAll(o) {
  const deadline = Date.now() + o.timeout * 1000;
  const last = new Map();
  let pending = [...o.urls];
  while (pending.length) {
    const results = await Promise.all(pending.map((u) => get(u, o)));
    pending = pending.filter((u, i) => {
      last.set(u, results[i]);
      return !ok(results[i], o);
    });
    if (!pending.length) break;
    const dead = (o.pids ?? []).filter((p) => !alive(p));
    if (dead.length) {
      process.stderr.write(`exited while starting: pid ${dead.join(', ')}\n`);
      return 3;
    }
    if (Date.now() > deadline) {
      for (const u of pending) {
        const r = last.get(u);
        process.stderr.write(`not ready: ${u} -> ${r.status || 'no answer'} ${r.body.split('\n').filter((l) => l.startsWith('[-]') || r.status === 0).join(' ').slice(0, 300)}\n`);
      }
      return 1;
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  return 0;
}

function readEnv(file) {
  const env = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]] = m[2];
  }
  return env;
}

function pidOf(dir, name) {
  const f = join(dir, 'run', `${name}.pid`);
  return existsSync(f) ? Number(readFileSync(f, 'utf8').trim()) || 0 : 0;
}

function writeAtomic(file, text) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

function writeState(dirArg) {
  const dir = resolve(dirArg);
  const p = readEnv(join(dir, 'ports.env'));
  const pki = join(dir, 'pki');
  const info = {
    etcd: [0, 1, 2].map((i) => ({ name: `etcd-${i}`, pid: pidOf(dir, `etcd-${i}`), clientURL: `https://127.0.0.1:${p[`ETCD_CLIENT_${i}`]}` })),
    apiservers: [0, 1, 2].map((i) => ({ pid: pidOf(dir, `apiserver-${i}`), url: `https://127.0.0.1:${p[`APISERVER_${i}`]}` })),
    loadBalancer: { pid: pidOf(dir, 'haproxy'), url: `https://127.0.0.1:${p.LB}` },
    etcdClientTLS: { ca: join(pki, 'etcd-ca.crt'), cert: join(pki, 'etcd-client.crt'), key: join(pki, 'etcd-client.key') },
  };
  writeAtomic(join(dir, 'cluster.json'), `${JSON.stringify(info, null, 2)}\n`);
  // The kubeconfig holds the admin token: 0600, like the token itself. JSON is valid YAML.
  const ca = readFileSync(join(pki, 'ca.crt')).toString('base64');
  const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
  const kc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'plinth-local', cluster: { server: info.loadBalancer.url, 'certificate-authority-data': ca } }],
    users: [{ name: 'plinth-local-admin', user: { token } }],
    contexts: [{ name: 'plinth-local', context: { cluster: 'plinth-local', user: 'plinth-local-admin' } }],
    'current-context': 'plinth-local',
    preferences: {},
  };
  writeAtomic(join(dir, 'kubeconfig'), `${JSON.stringify(kc, null, 2)}\n`);
}

async function main() {
  switch (cmd) {
    case 'free-ports':
      process.stdout.write(`${(await freePorts(Number(rest[0]))).join('\n')}\n`);
      return 0;
    case 'busy-ports': {
      const busy = [];
      for (const port of rest.map(Number)) {
        const s = await bind(port);
        if (s) await new Promise((r) => s.close(r));
        else busy.push(port);
      }
      if (busy.length) process.stdout.write(`${busy.join(' ')}\n`);
      return busy.length ? 1 : 0;
    }
    case 'wait':
      return waitAll(parseOpts(rest));
    case 'probe': {
      const o = parseOpts(rest);
      const r = await get(o.urls[0], o);
      process.stdout.write(`${r.status || 'down'} ${r.body.split('\n')[0].slice(0, 120)}\n`);
      return ok(r, o) ? 0 : 1;
    }
    case 'write-state':
      writeState(rest[0]);
      return 0;
    default:
      process.stderr.write(`helper.mjs: unknown command ${cmd}\n`);
      return 2;
  }
}

main().then((code) => process.exit(code), (e) => {
  process.stderr.write(`helper.mjs ${cmd}: ${e?.message ?? e}\n`);
  process.exit(1);
});
