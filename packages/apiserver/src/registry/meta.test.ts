import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { now } from './meta.js';

test('now(): RFC 3339 at second precision, following the clock across seconds', () => {
  mock.timers.enable({ apis: ['Date'], now: Date.UTC(2024, 1, 29, 23, 59, 58, 999) });
  try {
    assert.equal(now(), '2024-02-29T23:59:58Z');
    mock.timers.tick(1);
    assert.equal(now(), '2024-02-29T23:59:59Z');
    mock.timers.tick(999);
    assert.equal(now(), '2024-02-29T23:59:59Z');
    mock.timers.tick(1);
    assert.equal(now(), '2024-03-01T00:00:00Z');
    mock.timers.setTime(Date.UTC(2024, 1, 29, 23, 59, 56, 500)); // a clock set back
    assert.equal(now(), '2024-02-29T23:59:56Z');
  } finally {
    mock.timers.reset();
  }
  assert.match(now(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
});
