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
  assert.deepEqual(exposureOf(undefined, false), { visible: true, deprecated: false, shownHidden: false });
  assert.deepEqual(exposureOf('1.25.0', false), { visible: true, deprecated: false, shownHidden: false });
});

test('rule 13: deprecated and shown until the deprecated version is the current one minus 3, then hidden, then deleted', () => {
  for (const v of ['1.24', '1.23.0', '1.22']) assert.deepEqual(exposureOf(v, false), { visible: true, deprecated: true, shownHidden: false }, v);
  assert.deepEqual(exposureOf('1.21', false), { visible: false, deprecated: true, shownHidden: false });
  assert.deepEqual(exposureOf('1.21.0', true), { visible: true, deprecated: true, shownHidden: true });
  // One release later it is deleted: not even --show-hidden-metrics-for-version brings it back.
  assert.deepEqual(exposureOf('1.20', true), { visible: false, deprecated: true, shownHidden: false });
  assert.throws(() => exposureOf('one', false), /not <major>.<minor>/);
});

test('HELP: the stability class, then the spec\'s deprecation notice', () => {
  assert.equal(describe('Counter of things.', 'STABLE', undefined, false), '[STABLE] Counter of things.');
  assert.equal(describe('Counter of things.', 'ALPHA', '1.22.0', true), '[ALPHA] (Deprecated from 1.22) Counter of things.');
  assert.equal(describe('Counter of things.', 'ALPHA', '1.25.0', false), '[ALPHA] Counter of things.');
  assert.deepEqual(parseMinorVersion('1.23.4'), { major: 1, minor: 23 });
});

test('registry: a metric hidden by rule 13 is not scraped unless hidden metrics are shown; a deprecated one carries the notice', async () => {
  const { KubeRegistry } = await import('./registry.js');
  const declare = (r: InstanceType<typeof KubeRegistry>): void => {
    r.gauge({ name: 'plinth_test_hidden', help: 'Deprecated three releases ago.', labelNames: [], stability: 'STABLE', deprecatedVersion: '1.21.0' }).set(1);
    r.gauge({ name: 'plinth_test_deprecated', help: 'Deprecated last release.', labelNames: [], stability: 'ALPHA', deprecatedVersion: '1.23.0' }).set(2);
  };
  const plain = new KubeRegistry({ showHidden: false });
  declare(plain);
  const text = await plain.scrape();
  assert.doesNotMatch(text, /plinth_test_hidden/);
  assert.deepEqual(plain.hidden, ['plinth_test_hidden']);
  assert.match(text, /^# HELP plinth_test_deprecated \[ALPHA\] \(Deprecated from 1\.23\) Deprecated last release\.$/m);
  assert.match(text, /^plinth_test_deprecated 2$/m);
  const shown = new KubeRegistry({ showHidden: true });
  declare(shown);
  assert.match(await shown.scrape(), /^# HELP plinth_test_hidden \[STABLE\] \(Deprecated from 1\.21\) Deprecated three releases ago\.\n# TYPE plinth_test_hidden gauge\nplinth_test_hidden 1$/m);
});
