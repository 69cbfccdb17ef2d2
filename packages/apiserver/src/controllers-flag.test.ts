import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isControllerEnabled, PLINTH_CONTROLLERS, validateControllers } from './controllers-flag.js';

test("'*' runs plinth's set; -name turns one off; the first entry naming a controller decides, as kube's IsControllerEnabled", () => {
  for (const name of PLINTH_CONTROLLERS) assert.equal(isControllerEnabled(['*'], name), true, name);
  assert.equal(isControllerEnabled(['*'], 'garbagecollector'), true, 'plinth runs the garbage collector');
  assert.equal(isControllerEnabled(['*'], 'deployment'), false, 'a controller kube-controller-manager runs is not run by plinth');
  assert.equal(isControllerEnabled(['*', '-resourcequota'], 'resourcequota'), false);
  assert.equal(isControllerEnabled(['-resourcequota', '*'], 'resourcequota'), false);
  assert.equal(isControllerEnabled(['resourcequota', '-resourcequota'], 'resourcequota'), true, 'first match wins');
  assert.equal(isControllerEnabled(['namespace'], 'namespace'), true);
  assert.equal(isControllerEnabled(['namespace'], 'resourcequota'), false, 'without * only the named ones run');
  assert.equal(isControllerEnabled([], 'namespace'), false);
});

test("unknown names fail with kube's message; enabling a controller plinth does not run fails; disabling one is accepted", () => {
  assert.deepEqual(validateControllers(['*', '-garbagecollector', '-deployment']), []);
  assert.deepEqual(validateControllers(['foo', '-bar']), ['"foo" is not in the list of known controllers', '"bar" is not in the list of known controllers']);
  assert.deepEqual(validateControllers(['garbagecollector']), []);
  assert.deepEqual(validateControllers(['deployment']), ['controller "deployment" is not run by plinth (run kube-controller-manager for it)']);
});
