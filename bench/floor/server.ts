/**
 * The floor: the least a Node.js server must do to answer the bench's ServiceAccount requests, run
 * as its own process (so its CPU is read from /proc like plinth's) beside plinth in the same run.
 *
 * - TLS with plinth's own certificate and key, keep-alive 65 s as plinth.
 * - A bearer token compared in constant time with plinth's admin token; 401 otherwise.
 * - GET: one precomputed Buffer, the exact bytes plinth answers for the same object (handed over
 *   by the bench through IPC once it has them).
 * - POST: JSON.parse, uid and creationTimestamp, one etcd txn (create_revision == 0 → put), under
 *   plinth's key layout beneath a prefix of its own; 201 with the object (resourceVersion = the
 *   txn's revision).
 * - PUT: one range (get) and one txn on mod_revision (409 on mismatch); 200 with the object.
 * - GET of the collection with `watch=1&resourceVersion=R`: the fan-out floor (fanout.ts).
 *
 * `--client=fastkv|etcd3` (or FLOOR_CLIENT; default fastkv) picks the etcd client (clients.ts):
 * plinth's own hot-path client (FastKV and the watch caches' feed) or the etcd3 library.
 * `--express` mounts the same handler as express 5 routes: the "express floor", for information.
 *
 * Both clients open an HTTP/2 stream per call, so the floor installs the same cheaper
 * `AsyncResource#bind` as plinth (@plinth/storage's async-resource-bind.ts).
 *
 * Configuration comes from the environment (FLOOR_CERT, FLOOR_KEY, FLOOR_TOKEN, FLOOR_ETCD,
 * FLOOR_PREFIX); the listening port is printed as `floor listening on <port>`.
 */
import { createServer, type ServerOptions } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import express from 'express';
import { createFloorEtcd, floorClientName } from './clients.js';
import { createFanout } from './fanout.js';
import { installFastAsyncResourceBind } from '@plinth/storage';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`floor: ${name} is not set`);
  return v;
};

const expected = Buffer.from(`Bearer ${env('FLOOR_TOKEN')}`);
const prefix = env('FLOOR_PREFIX');
installFastAsyncResourceBind();
const kv = createFloorEtcd(floorClientName(process.argv, process.env), env('FLOOR_ETCD'));
const fanout = createFanout(kv, prefix);
let getBody: Buffer = Buffer.from('{}');

const JSON_TYPE = 'application/json';

function send(res: ServerResponse, status: number, body: Buffer | string): void {
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function authorized(req: IncomingMessage): boolean {
  const h = req.headers.authorization;
  if (h === undefined || h.length !== expected.length) return false;
  const got = Buffer.from(h);
  return got.length === expected.length && timingSafeEqual(got, expected);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

interface Obj {
  metadata: { name: string; namespace?: string; uid?: string; creationTimestamp?: string; resourceVersion?: string };
}

function timestamp(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/** resourceVersion=R of a `watch=1` query (R ≥ 0), else undefined. */
function watchFrom(url: string): number | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  const params = new URLSearchParams(url.slice(q + 1));
  const watch = params.get('watch');
  if (watch !== '1' && watch !== 'true') return undefined;
  const rv = Number(params.get('resourceVersion') ?? '0');
  return Number.isSafeInteger(rv) && rv >= 0 ? rv : undefined;
}

/** /api/v1/namespaces/{ns}/{resource}[/{name}] → [ns, resource, name?]; anything else → undefined. */
function parsePath(url: string): [string, string, string | undefined] | undefined {
  const q = url.indexOf('?');
  const parts = (q < 0 ? url : url.slice(0, q)).split('/');
  // ['', 'api', 'v1', 'namespaces', ns, resource, name?]
  if (parts.length < 6 || parts.length > 7 || parts[1] !== 'api' || parts[3] !== 'namespaces') return undefined;
  return [parts[4]!, parts[5]!, parts[6]];
}

async function create(req: IncomingMessage, res: ServerResponse, ns: string, resource: string): Promise<void> {
  const obj = JSON.parse((await readBody(req)).toString('utf8')) as Obj;
  obj.metadata.namespace = ns;
  obj.metadata.uid = randomUUID();
  obj.metadata.creationTimestamp = timestamp();
  delete obj.metadata.resourceVersion;
  const key = Buffer.from(`${prefix}/${resource}/${ns}/${obj.metadata.name}`);
  const r = await kv.txn({
    compare: [{ key, target: 'Create', result: 'Equal', create_revision: 0 }],
    success: [{ request_put: { key, value: Buffer.from(JSON.stringify(obj)) } }],
    failure: [],
  });
  if (!r.succeeded) return send(res, 409, '{"kind":"Status","code":409,"reason":"AlreadyExists"}');
  obj.metadata.resourceVersion = r.header.revision;
  send(res, 201, JSON.stringify(obj));
}

async function update(req: IncomingMessage, res: ServerResponse, ns: string, resource: string, name: string): Promise<void> {
  const obj = JSON.parse((await readBody(req)).toString('utf8')) as Obj;
  const key = Buffer.from(`${prefix}/${resource}/${ns}/${name}`);
  const cur = (await kv.range({ key })).kvs[0];
  if (!cur) return send(res, 404, '{"kind":"Status","code":404,"reason":"NotFound"}');
  if (obj.metadata.resourceVersion !== cur.mod_revision) return send(res, 409, '{"kind":"Status","code":409,"reason":"Conflict"}');
  const old = JSON.parse(cur.value.toString('utf8')) as Obj;
  obj.metadata.uid = old.metadata.uid;
  obj.metadata.creationTimestamp = old.metadata.creationTimestamp;
  delete obj.metadata.resourceVersion;
  const r = await kv.txn({
    compare: [{ key, target: 'Mod', result: 'Equal', mod_revision: cur.mod_revision }],
    success: [{ request_put: { key, value: Buffer.from(JSON.stringify(obj)) } }],
    failure: [],
  });
  if (!r.succeeded) return send(res, 409, '{"kind":"Status","code":409,"reason":"Conflict"}');
  obj.metadata.resourceVersion = r.header.revision;
  send(res, 200, JSON.stringify(obj));
}

/** The whole floor: auth, then GET / POST / PUT on one namespaced resource path, or a watch of it. */
function handle(req: IncomingMessage, res: ServerResponse): void {
  if (!authorized(req)) return send(res, 401, '{"kind":"Status","code":401,"reason":"Unauthorized"}');
  const url = req.url ?? '';
  const p = parsePath(url);
  if (!p) return send(res, 404, '{"kind":"Status","code":404,"reason":"NotFound"}');
  const [ns, resource, name] = p;
  let work: Promise<void> | undefined;
  if (req.method === 'GET' && name !== undefined) return send(res, 200, getBody);
  if (req.method === 'GET') {
    const from = watchFrom(url);
    if (from === undefined) return send(res, 405, '{"kind":"Status","code":405,"reason":"MethodNotAllowed"}');
    return fanout.serve(res, ns, resource, from);
  }
  if (req.method === 'POST' && name === undefined) work = create(req, res, ns, resource);
  else if (req.method === 'PUT' && name !== undefined) work = update(req, res, ns, resource, name);
  else return send(res, 405, '{"kind":"Status","code":405,"reason":"MethodNotAllowed"}');
  work.catch((e: unknown) => {
    if (!res.headersSent) send(res, 500, JSON.stringify({ kind: 'Status', code: 500, message: String(e) }));
    else res.destroy();
  });
}

function expressApp(): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  const h = (req: express.Request, res: express.Response): void => handle(req, res);
  app.get('/api/v1/namespaces/:ns/:resource/:name', h);
  app.get('/api/v1/namespaces/:ns/:resource', h);
  app.post('/api/v1/namespaces/:ns/:resource', h);
  app.put('/api/v1/namespaces/:ns/:resource/:name', h);
  return app;
}

const tls: ServerOptions = { cert: readFileSync(env('FLOOR_CERT')), key: readFileSync(env('FLOOR_KEY')) };
const server = process.argv.includes('--express') ? createServer(tls, expressApp()) : createServer(tls, handle);
server.keepAliveTimeout = 65_000;

// The bench hands over the GET body once it has fetched it from plinth.
process.on('message', (m: { getBody?: string }) => {
  if (typeof m.getBody === 'string') {
    getBody = Buffer.from(m.getBody, 'base64');
    process.send?.({ ok: true });
  }
});
process.on('SIGTERM', () => {
  // Exits once the connections are closed: the etcd watch feed's gRPC stream (fastkv) would
  // otherwise hold the process until the bench's 10 s SIGKILL.
  server.close(() => process.exit(0));
  server.closeAllConnections();
  kv.close();
  process.disconnect?.();
});

server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`floor listening on ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
});
