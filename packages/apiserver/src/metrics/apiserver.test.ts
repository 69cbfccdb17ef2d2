import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Catalog, builtinResources, tooManyRequests } from '@plinth/api';
import { setContext, type Handler } from '../context.js';
import { parseRequestInfo } from '../request-info.js';
import { resolveResourceTarget } from '../handlers/target.js';
import { ApiserverMetrics } from './apiserver.js';

function request(method: string, path: string): { req: IncomingMessage; res: ServerResponse } {
  const req = { method, headers: {}, url: path } as unknown as IncomingMessage;
  const res = { statusCode: 200, getHeader: () => undefined, once: () => undefined } as unknown as ServerResponse;
  const [p, q = ''] = path.split('?');
  const query = new URLSearchParams(q);
  const info = parseRequestInfo(method, p!, query);
  // As the resource-target filter leaves it for the route.
  setContext(req, { info, query, start: process.hrtime.bigint(), target: resolveResourceTarget(CATALOG, info, method) });
  return { req, res };
}

const CATALOG = new Catalog(builtinResources());

function metrics(): ApiserverMetrics {
  const m = new ApiserverMetrics({ recording: true, showHidden: false });
  m.attach(CATALOG);
  return m;
}

test('a request a limiter refuses with 429 is counted once, with code 429 (kube: RecordDroppedRequest)', async () => {
  const m = metrics();
  const refuse: Handler = async () => {
    throw tooManyRequests();
  };
  const chain = m.trackInflight(refuse);
  const { req, res } = request('GET', '/api/v1/namespaces/a/configmaps');
  await assert.rejects(chain(req, res));
  const text = await m.scrape();
  assert.match(text, /apiserver_request_total\{verb="LIST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="namespace",component="apiserver",code="429"\} 1\n/);
  m.close();
});

test('a 429 answered by the route itself is counted by the route, not again by the limiter wrapper', async () => {
  const m = metrics();
  const route: Handler = async () => {
    throw tooManyRequests();
  };
  const chain = m.trackInflight(m.instrument(route));
  const { req, res } = request('POST', '/api/v1/namespaces/a/configmaps');
  await assert.rejects(chain(req, res));
  assert.match(await m.scrape(), /apiserver_request_total\{verb="POST",[^}]*code="429"\} 1\n/);
  m.close();
});

test('recording off: the filters are the handlers they wrap', () => {
  const m = new ApiserverMetrics({ recording: false, showHidden: false });
  const h: Handler = async () => undefined;
  assert.equal(m.instrument(h), h);
  assert.equal(m.trackInflight(h), h);
});
