import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isProxyableIP, rewriteLocation } from './proxy.js';
import { splitSchemeNamePort } from '../proxy-addresses.js';

test("splitSchemeNamePort: kube's name, name:port and scheme:name:port", () => {
  assert.deepEqual(splitSchemeNamePort('web'), { scheme: '', name: 'web', port: '' });
  assert.deepEqual(splitSchemeNamePort('web:http'), { scheme: '', name: 'web', port: 'http' });
  assert.deepEqual(splitSchemeNamePort('https:web:443'), { scheme: 'https', name: 'web', port: '443' });
  assert.equal(splitSchemeNamePort('ftp:web:21'), undefined);
  assert.equal(splitSchemeNamePort(':80'), undefined);
  assert.equal(splitSchemeNamePort('a:b:c:d'), undefined);
});

test('isProxyableIP: never loopback, link-local, unspecified or no IP at all', () => {
  for (const ip of ['127.0.0.1', '127.9.9.9', '::1', '169.254.169.254', 'fe80::1', '0.0.0.0', '::', '224.0.0.1', 'ff02::1', 'example.com', '']) assert.equal(isProxyableIP(ip), false, ip);
  for (const ip of ['10.1.2.3', '192.0.2.7', '2001:db8::5']) assert.equal(isProxyableIP(ip), true, ip);
});

test("rewriteLocation: the backend's own host and absolute paths go under the proxy path; others are left alone", () => {
  const prefix = '/api/v1/namespaces/ns/services/web/proxy';
  assert.equal(rewriteLocation('/login?next=%2F', '10.0.0.5:80', 'plinth:6443', prefix), `${prefix}/login?next=%2F`);
  assert.equal(rewriteLocation('http://10.0.0.5:80/a/', '10.0.0.5:80', 'plinth:6443', prefix), `${prefix}/a/`);
  assert.equal(rewriteLocation('https://evil.example.com/x', '10.0.0.5:80', 'plinth:6443', prefix), 'https://evil.example.com/x');
  assert.equal(rewriteLocation('next/page', '10.0.0.5:80', 'plinth:6443', prefix), 'next/page');
  assert.equal(rewriteLocation(`${prefix}/already`, '10.0.0.5:80', 'plinth:6443', prefix), `${prefix}/already`);
});
