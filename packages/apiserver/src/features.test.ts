import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FEATURE_GATES, featureGatesFrom, featureGatesUsage, type FeatureSpec } from './features.js';

test('defaults: Alpha off, Beta on; GA gates on', () => {
  const g = featureGatesFrom({}, [], () => {});
  assert.equal(g.enabled('ServerSideFieldValidation'), false);
  assert.equal(g.enabled('APIListChunking'), true);
  assert.equal(g.enabled('ConsistentListFromCache'), true);
  assert.equal(g.enabled('WatchBookmark'), true);
  for (const [name, spec] of Object.entries(FEATURE_GATES) as Array<[string, FeatureSpec]>) {
    if (spec.stage === 'ALPHA') assert.equal(spec.default, false, name);
    if (spec.lockToDefault) assert.ok(spec.stage === 'GA' || spec.stage === 'DEPRECATED', name);
  }
});

test('unknown and locked gates are errors; GA and deprecated gates warn', () => {
  const errs: string[] = [];
  const warnings: string[] = [];
  featureGatesFrom({ Nope: true, WatchBookmark: false, RemoveSelfLink: true, ServerSideApply: false, DynamicKubeletConfig: false }, errs, (w) => warnings.push(w));
  assert.deepEqual(errs, ['unrecognized feature gate: Nope', 'cannot set feature gate WatchBookmark to false, feature is locked to true']);
  assert.deepEqual(warnings, [
    'Setting GA feature gate RemoveSelfLink=true. It will be removed in a future release.',
    'Setting GA feature gate ServerSideApply=false. It will be removed in a future release.',
    'Setting deprecated feature gate DynamicKubeletConfig=false. It will be removed in a future release.',
  ]);
});

test('AllAlpha / AllBeta set the gates of their stage not set explicitly', () => {
  const g = featureGatesFrom({ AllAlpha: true, AllBeta: false, APIListChunking: true }, [], () => {});
  assert.equal(g.enabled('ServerSideFieldValidation'), true);
  assert.equal(g.enabled('ConsistentListFromCache'), false);
  assert.equal(g.enabled('APIListChunking'), true);
  assert.equal(g.enabled('WatchBookmark'), true);
});

test('usage: kube’s form, Alpha/Beta sorted first, then GA and deprecated', () => {
  const lines = featureGatesUsage();
  assert.equal(lines.length, Object.keys(FEATURE_GATES).length);
  assert.ok(lines.includes('APIListChunking=true|false (BETA - default=true)'));
  assert.ok(lines.includes('APIResponseCompression=true|false (BETA - default=true) [declared, not implemented]'));
  const alphaBeta = lines.filter((l) => /\((ALPHA|BETA) /.test(l)).map((l) => l.split('=')[0]!);
  assert.deepEqual(alphaBeta, [...alphaBeta].sort());
  assert.ok(lines.indexOf('WatchBookmark=true|false (GA - default=true, locked)') > lines.findIndex((l) => l.startsWith('WindowsHostProcessContainers')));
});
