import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { OutboundError, dialKubelet, forwardedHeaders, sendOutbound } from './kubelet-client.js';
import { isGlobalUnicast, splitSchemeNamePort } from '../proxy-addresses.js';

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('kubelet client', () => {
  it("answers a refused dial with Go's text", async () => {
    const port = await closedPort();
    await assert.rejects(sendOutbound({ url: new URL(`https://127.0.0.1:${port}/containerLogs/a/b/c`), method: 'GET', headers: {}, timeoutMs: 2000 }), (e: unknown) => {
      assert.ok(e instanceof OutboundError);
      assert.equal(e.message, `dial tcp 127.0.0.1:${port}: connect: connection refused`);
      return true;
    });
    await assert.rejects(dialKubelet('127.0.0.1', port, 2000, { rejectUnauthorized: false }), { message: `error dialing backend: dial tcp 127.0.0.1:${port}: connect: connection refused` });
  });

  it('gives up on a backend that never answers within the timeout', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as AddressInfo;
    try {
      const started = Date.now();
      await assert.rejects(sendOutbound({ url: new URL(`http://127.0.0.1:${port}/`), method: 'GET', headers: {}, timeoutMs: 300 }), { message: 'net/http: timeout awaiting response headers' });
      assert.ok(Date.now() - started < 5000);
      await assert.rejects(dialKubelet('127.0.0.1', port, 300, { rejectUnauthorized: false }), { message: `error dialing backend: dial tcp 127.0.0.1:${port}: i/o timeout` });
    } finally {
      silent.close();
    }
  });

  it("never passes on the client's credentials or hop-by-hop headers", () => {
    const out = forwardedHeaders({ authorization: 'Bearer x', 'impersonate-user': 'admin', connection: 'keep-alive, x-hop', 'x-hop': '1', accept: 'text/html', host: 'plinth' }, '10.0.0.9');
    assert.deepEqual(out, { accept: 'text/html', 'x-forwarded-for': '10.0.0.9' });
  });
});

describe('pod proxy addresses', () => {
  it("are kube's SplitSchemeNamePort", () => {
    assert.deepEqual(splitSchemeNamePort('web'), { scheme: '', name: 'web', port: '' });
    assert.deepEqual(splitSchemeNamePort('web:80'), { scheme: '', name: 'web', port: '80' });
    assert.deepEqual(splitSchemeNamePort('https:web:443'), { scheme: 'https', name: 'web', port: '443' });
    assert.equal(splitSchemeNamePort('ftp:web:21'), undefined);
    assert.equal(splitSchemeNamePort(':80'), undefined);
    assert.equal(splitSchemeNamePort('a:b:c:d'), undefined);
  });

  it("are Go's global unicast addresses only", () => {
    for (const ip of ['10.0.0.1', '192.0.2.2', '8.8.8.8', '240.0.0.1', '2001:db8::1', 'fd00::2', '::ffff:10.0.0.1']) assert.equal(isGlobalUnicast(ip), true, ip);
    for (const ip of ['', 'x', '127.0.0.1', '127.1.2.3', '0.0.0.0', '255.255.255.255', '169.254.169.254', '224.0.0.1', '::', '::1', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:169.254.169.254']) {
      assert.equal(isGlobalUnicast(ip), false, ip);
    }
  });
});
