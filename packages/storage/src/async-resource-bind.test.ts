import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncLocalStorage, AsyncResource, executionAsyncId } from 'node:async_hooks';
import { once } from 'node:events';
import { spawnSync } from 'node:child_process';
import { connect, createServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { installFastAsyncResourceBind } from './async-resource-bind.js';

type Fn = (this: unknown, ...args: unknown[]) => unknown;
type Bind = (this: AsyncResource, fn: Fn, thisArg?: unknown) => Fn;

const nodeBind = AsyncResource.prototype.bind as unknown as Bind;
const installed = installFastAsyncResourceBind();
const fastBind = AsyncResource.prototype.bind as unknown as Bind;

/** What a caller can observe of one bind: the call's scope, `this`, arguments and result, and the function's shape. */
function observe(bind: Bind, thisArg?: unknown): Record<string, unknown> {
  const als = new AsyncLocalStorage<string>();
  const seen: Record<string, unknown> = {};
  const holder: { bound?: Fn } = {};
  let resource!: AsyncResource;
  const fn = function (this: unknown, a: unknown, b: unknown, c: unknown): unknown {
    if ('result' in seen) {
      seen['again'] = { store: als.getStore(), inResourceScope: executionAsyncId() === resource.asyncId() };
      return undefined;
    }
    seen['store'] = als.getStore();
    seen['inResourceScope'] = executionAsyncId() === resource.asyncId();
    seen['this'] = this === holder ? 'the caller' : this === thisArg ? 'thisArg' : this;
    seen['args'] = [a, b, c];
    return 'result';
  };
  const bound = als.run('bound-here', () => {
    resource = new AsyncResource('Probe');
    return bind.call(resource, fn as Fn, thisArg);
  });
  holder.bound = bound;
  seen['result'] = als.run('called-here', () => holder.bound!(1, 2));
  seen['length'] = bound.length;
  seen['lengthDescriptor'] = { ...Object.getOwnPropertyDescriptor(bound, 'length'), value: undefined };
  seen['ownKeys'] = Reflect.ownKeys(bound).filter((k) => k !== 'name' && k !== 'prototype');
  seen['asyncResourceEnumerable'] = Object.getOwnPropertyDescriptor(bound, 'asyncResource')!.enumerable;
  seen['readsResource'] = (bound as unknown as { asyncResource: AsyncResource }).asyncResource === resource;
  const other = new AsyncResource('Other');
  (bound as unknown as { asyncResource: AsyncResource }).asyncResource = other;
  seen['replacesResource'] = (bound as unknown as { asyncResource: AsyncResource }).asyncResource === other;
  // The bound function keeps the resource it was bound to, as Node's closure does.
  als.run('again', () => bound());
  return seen;
}

describe('the cheaper AsyncResource#bind', () => {
  it('is installed on this Node release (its own bind builds util.deprecate wrappers)', () => {
    assert.equal(Number(process.versions.node.split('.')[0]) <= 22 ? installed : true, true);
  });

  for (const [label, thisArg] of [['without thisArg', undefined], ['with thisArg', { fixed: true }]] as const) {
    it(`behaves as Node's own bind ${label}`, () => {
      const mine = observe(fastBind, thisArg);
      const node = observe(nodeBind, thisArg);
      assert.deepEqual(mine, node);
      assert.equal(mine['store'], 'bound-here');
      assert.equal(mine['inResourceScope'], true);
      assert.deepEqual(mine['args'], [1, 2, undefined]);
      assert.equal(mine['result'], 'result');
      assert.equal(mine['length'], 3);
      assert.equal(mine['readsResource'], true);
      assert.equal(mine['replacesResource'], true);
      assert.deepEqual(mine['again'], { store: 'bound-here', inResourceScope: true });
      assert.equal(mine['this'], thisArg ? 'thisArg' : 'the caller');
    });
  }

  it('keeps a zero-argument function at length 0 and the static AsyncResource.bind working', () => {
    const als = new AsyncLocalStorage<number>();
    const bound = als.run(7, () => AsyncResource.bind(() => als.getStore()));
    assert.equal(bound.length, 0);
    assert.equal(bound(), 7);
    assert.equal(Object.getOwnPropertyDescriptor(bound, 'length')!.value, 0);
  });

  it('keeps asyncResource as a plain value, without the DEP0172 report', () => {
    const script = `
      import { AsyncResource } from 'node:async_hooks';
      import { installFastAsyncResourceBind } from ${JSON.stringify(new URL('./async-resource-bind.js', import.meta.url).href)};
      installFastAsyncResourceBind();
      const r = new AsyncResource('A');
      const a = r.bind(() => 1);
      if (a.asyncResource !== r) process.exit(3);
      a.asyncResource = 'x';
      if (a.asyncResource !== 'x') process.exit(4);
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
  });

  it('refuses a non-function as Node does', () => {
    const r = new AsyncResource('E');
    for (const bad of [1, null, 'f', {}]) {
      const theirs = (() => { try { nodeBind.call(r, bad as unknown as Fn); } catch (e) { return e as Error & { code?: string }; } })();
      assert.throws(() => fastBind.call(r, bad as unknown as Fn), (e: Error & { code?: string }) => e.code === 'ERR_INVALID_ARG_TYPE' && e.message === theirs?.message);
    }
  });

  it('carries an HTTP/2 client stream in the async context it was opened in', async () => {
    const server = createServer();
    server.on('stream', (stream) => stream.respond({ ':status': 200 }, { endStream: true }));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const session = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      const als = new AsyncLocalStorage<string>();
      // The session is still connecting: the stream starts from the bound function on 'connect'.
      const got = await als.run('request-1', () => new Promise<[number, string | undefined]>((resolve, reject) => {
        const req = session.request({ ':path': '/' });
        req.on('response', (h) => resolve([Number(h[':status']), als.getStore()]));
        req.on('error', reject);
        req.end();
      }));
      assert.deepEqual(got, [200, 'request-1']);
    } finally {
      session.close();
      server.close();
    }
  });
});
