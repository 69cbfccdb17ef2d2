import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describe, exposureOf, parseMinorVersion, validateShowHiddenMetricsVersion } from './stability.js';

test('--show-hidden-metrics-for-version takes only the previous minor version (kube 1.24: 1.23)', () => {
  assert.equal(validateShowHiddenMetricsVersion(''), undefined);
  assert.equal(validateShowHiddenMetricsVersion('1.23'), undefined);
  for (const bad of ['1.22', '1.24', '1.23.0', 'v1.23', 'x']) {
    assert.equal(validateShowHiddenMetricsVersion(bad), "--show-hidden-metrics-for-version must be omitted or have the value '1.23'. Only the previous minor version is allowed", bad);
  }
});

test('a metric that is not deprecated (or deprecated in a later release) is shown as it is', () => {
  assert.deepEqual(exposureOf('STABLE', undefined, false), { visible: true, deprecated: false, shownHidden: false });
  assert.deepEqual(exposureOf('ALPHA', '1.25.0', false), { visible: true, deprecated: false, shownHidden: false });
});

test('ALPHA: deprecated and shown in the release that deprecates it, hidden from the next (kube: etcd_object_counts, apiserver_longrunning_gauge)', () => {
  assert.deepEqual(exposureOf('ALPHA', '1.24.0', false), { visible: true, deprecated: true, shownHidden: false });
  assert.deepEqual(exposureOf('ALPHA', '1.23.0', false), { visible: false, deprecated: true, shownHidden: false });
  assert.deepEqual(exposureOf('ALPHA', '1.22.0', false), { visible: false, deprecated: true, shownHidden: false });
  assert.deepEqual(exposureOf('ALPHA', '1.22.0', true), { visible: true, deprecated: true, shownHidden: true });
});

test('STABLE: deprecated and shown for three releases; hidden when its deprecated version is the current one minus 3', () => {
  for (const v of ['1.24', '1.23', '1.22']) assert.deepEqual(exposureOf('STABLE', v, false), { visible: true, deprecated: true, shownHidden: false }, v);
  assert.deepEqual(exposureOf('STABLE', '1.21', false), { visible: false, deprecated: true, shownHidden: false });
  assert.deepEqual(exposureOf('STABLE', '1.21', true), { visible: true, deprecated: true, shownHidden: true });
  assert.throws(() => exposureOf('STABLE', 'one', false), /not <major>.<minor>/);
});

test('HELP: the stability class, then the spec\'s deprecation notice', () => {
  assert.equal(describe('Counter of things.', 'STABLE', undefined, false), '[STABLE] Counter of things.');
  assert.equal(describe('Counter of things.', 'ALPHA', '1.22.0', true), '[ALPHA] (Deprecated from 1.22) Counter of things.');
  assert.equal(describe('Counter of things.', 'ALPHA', '1.25.0', false), '[ALPHA] Counter of things.');
  assert.deepEqual(parseMinorVersion('1.23.4'), { major: 1, minor: 23 });
});
