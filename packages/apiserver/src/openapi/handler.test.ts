import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { Catalog, builtinResources, isStatusError } from '@plinth/api';
import { requireMessage } from '../protobuf/loader.js';
import { createOpenAPIHandler } from './handler.js';

let server: Server;
let base: string;
const catalog = new Catalog(builtinResources());

before(async () => {
  const handler = createOpenAPIHandler(catalog);
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    handler(req, res, url.pathname, url.searchParams).then(
      (served) => {
        if (!served) {
          res.statusCode = 599;
          res.end();
        }
      },
      (e: unknown) => {
        res.statusCode = isStatusError(e) ? e.code : 500;
        res.end(isStatusError(e) ? JSON.stringify(e.toStatus()) : String(e));
      },
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => new Promise<void>((r) => server.close(() => r())));

interface Res {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, base), { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('other paths are not served', async () => {
  assert.equal((await get('/openapi')).status, 599);
  assert.equal((await get('/openapiv2')).status, 599);
});

test('/openapi/v3 discovery lists exactly the served group-versions with hashed URLs', async () => {
  const r = await get('/openapi/v3');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.match(String(r.headers['etag']), /^"[0-9A-F]{128}"$/);
  const disco = JSON.parse(r.body.toString()) as { paths: Record<string, { serverRelativeURL: string }> };
  const served = [...new Set(catalog.all().map((d) => (d.group ? `apis/${d.group}/${d.version}` : `api/${d.version}`)))].sort();
  assert.deepEqual(Object.keys(disco.paths), served);
  for (const [gv, { serverRelativeURL }] of Object.entries(disco.paths)) {
    assert.match(serverRelativeURL, new RegExp(`^/openapi/v3/${gv.replace(/\./g, '\\.')}\\?hash=[0-9A-F]{128}$`));
    const doc = await get(serverRelativeURL);
    assert.equal(doc.status, 200);
    assert.equal(doc.headers['cache-control'], 'public, immutable');
    assert.ok(Date.parse(String(doc.headers['expires'])) > Date.now() + 300 * 24 * 3600 * 1000);
    assert.equal(doc.headers['etag'], `"${new URL(serverRelativeURL, base).searchParams.get('hash')}"`);
    assert.equal(JSON.parse(doc.body.toString()).openapi, '3.0.0');
  }
});

test('/openapi/v3/<gv>: ETag revalidation, stale hash redirect, unknown group-version 404', async () => {
  const first = await get('/openapi/v3/api/v1');
  assert.equal(first.status, 200);
  assert.equal(first.headers['cache-control'], undefined);
  assert.equal(first.headers['vary'], 'Accept');
  const etag = String(first.headers['etag']);
  assert.equal((await get('/openapi/v3/api/v1', { 'if-none-match': etag })).status, 304);
  const stale = await get('/openapi/v3/api/v1?hash=0123');
  assert.equal(stale.status, 301);
  assert.equal(stale.headers['location'], `/openapi/v3/api/v1?hash=${etag.slice(1, -1)}`);
  const missing = await get('/openapi/v3/apis/nope.example.com/v1');
  assert.equal(missing.status, 404);
  assert.equal(JSON.parse(missing.body.toString()).reason, 'NotFound');
  assert.equal((await get('/openapi/v3/api/v1', { accept: 'text/html' })).status, 406);
});

test('/openapi/v2: JSON by default, gnostic protobuf by Accept, ETag and gzip', async () => {
  const json = await get('/openapi/v2');
  assert.equal(json.status, 200);
  assert.equal(JSON.parse(json.body.toString()).swagger, '2.0');
  assert.match(String(json.headers['etag']), /^"[0-9A-F]{128}"$/);
  assert.equal((await get('/openapi/v2', { 'if-none-match': String(json.headers['etag']) })).status, 304);

  const pb = await get('/openapi/v2', { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'accept-encoding': 'gzip' });
  assert.equal(pb.status, 200);
  assert.equal(pb.headers['content-encoding'], 'gzip');
  assert.notEqual(pb.headers['etag'], json.headers['etag']);
  const type = requireMessage('openapi.v2.Document');
  const doc = type.toObject(type.decode(gunzipSync(pb.body))) as { swagger: string };
  assert.equal(doc.swagger, '2.0');
  assert.equal((await get('/openapi/v2', { accept: 'application/xml' })).status, 406);
  assert.equal((await get('/openapi/v2', {}, 'HEAD')).body.length, 0);
  assert.equal((await get('/openapi/v2', {}, 'POST')).status, 405);
});
