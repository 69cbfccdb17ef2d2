import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stringifyJson } from '@plinth/api';
import { mayReferenceClaims } from './pvc-protection.js';

const pod = (volumes: unknown[]): string =>
  stringifyJson({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [{ name: 'c', image: 'i' }], volumes } });

describe('pvc-protection: the pod event text filter', () => {
  it('passes every pod that has a claim volume, persistent or ephemeral', () => {
    assert.equal(mayReferenceClaims(pod([{ name: 'data', persistentVolumeClaim: { claimName: 'c1' } }])), true);
    assert.equal(mayReferenceClaims(pod([{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'] } } } }])), true);
  });

  it('skips pods whose volumes hold no claim', () => {
    assert.equal(mayReferenceClaims(pod([])), false);
    assert.equal(mayReferenceClaims(pod([{ name: 'cfg', configMap: { name: 'claims' }, emptyDir: {} }])), false);
  });
});
