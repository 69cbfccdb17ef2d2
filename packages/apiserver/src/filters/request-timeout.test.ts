import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestTimeoutOf } from './request-timeout.js';
import { parseFlags, FlagError } from '../flags.js';

test('--request-timeout and --min-request-timeout: kube-apiserver\'s defaults and checks', () => {
  const o = parseFlags([]);
  assert.equal(o.requestTimeout, 60_000);
  assert.equal(o.minRequestTimeout, 1800);
  assert.equal(o.startupStepTimeout, 60_000);
  assert.equal(parseFlags(['--request-timeout=2m30s']).requestTimeout, 150_000);
  assert.equal(parseFlags(['--min-request-timeout', '0']).minRequestTimeout, 0);
  assert.throws(() => parseFlags(['--min-request-timeout=-1']), (e) => e instanceof FlagError && e.message === '--min-request-timeout can not be negative value');
  assert.throws(() => parseFlags(['--request-timeout=soon']), /invalid argument "soon" for "--request-timeout" flag/);
  assert.throws(() => parseFlags(['--startup-step-timeout=0']), /--startup-step-timeout must be positive/);
});

test('the timeout parameter shortens the server\'s timeout, never lengthens it; Go syntax, kube\'s 400', () => {
  const q = (s: string): URLSearchParams => new URLSearchParams(s);
  assert.equal(requestTimeoutOf(q(''), 60_000), 60_000);
  assert.equal(requestTimeoutOf(q('timeout='), 60_000), 60_000);
  assert.equal(requestTimeoutOf(q('timeout=5s'), 60_000), 5_000);
  assert.equal(requestTimeoutOf(q('timeout=1h'), 60_000), 60_000);
  assert.equal(requestTimeoutOf(q('timeout=0s'), 60_000), 60_000);
  assert.equal(requestTimeoutOf(q('timeout=-3s'), 60_000), 60_000);
  assert.equal(requestTimeoutOf(q('timeout=250ms'), 0), 250);
  assert.throws(() => requestTimeoutOf(q('timeout=5'), 60_000), (e: { code?: number; reason?: string; message?: string }) =>
    e.code === 400 && e.reason === 'BadRequest' && e.message === 'invalid timeout specified in the request URL - time: missing unit in duration "5"');
});
