/** The ResourceQuota plugin's configuration as kube's LoadConfiguration and ValidateConfiguration read it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuotaConfiguration } from './config.js';

test('limitedResources from any of the three configuration versions; kube refuses a resource-less entry and unknown kinds', () => {
  assert.deepEqual(parseQuotaConfiguration(undefined), []);
  assert.deepEqual(
    parseQuotaConfiguration({
      apiVersion: 'resourcequota.admission.k8s.io/v1beta1',
      kind: 'Configuration',
      limitedResources: [{ resource: 'pods', matchContains: ['requests.cpu'], matchScopes: [{ scopeName: 'PriorityClass', operator: 'In', values: ['x'] }] }],
    }),
    [{ apiGroup: '', resource: 'pods', matchContains: ['requests.cpu'], matchScopes: [{ scopeName: 'PriorityClass', operator: 'In', values: ['x'] }] }],
  );
  assert.deepEqual(parseQuotaConfiguration({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'ResourceQuotaConfiguration' }), []);
  assert.throws(() => parseQuotaConfiguration({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'ResourceQuotaConfiguration', limitedResources: [{ apiGroup: 'apps' }] }), /limitedResources\[0\]\.resource: Required value/);
  assert.throws(() => parseQuotaConfiguration({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'Configuration' }), /no kind "Configuration" is registered for version "apiserver.config.k8s.io\/v1"/);
});
