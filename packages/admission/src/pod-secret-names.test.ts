import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '@plinth/api';
import { podSecretNames } from './pod-secret-names.js';

const pod = (spec: Record<string, unknown>): StoredObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec });

test('every Secret a pod names, in kube\'s order: pull secrets, containers (init, regular, ephemeral), volumes', () => {
  const names = [...podSecretNames(pod({
    imagePullSecrets: [{ name: 'pull' }, { name: '' }],
    initContainers: [{ name: 'i', envFrom: [{ secretRef: { name: 'init-from' } }, { configMapRef: { name: 'cm' } }] }],
    containers: [{ name: 'c', env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'env', key: 'k' } } }, { name: 'B', value: 'x' }] }],
    ephemeralContainers: [{ name: 'e', env: [{ name: 'C', valueFrom: { secretKeyRef: { name: 'eph', key: 'k' } } }] }],
    volumes: [
      { name: 'a', azureFile: { secretName: 'azure', shareName: 's' } },
      { name: 'b', cephfs: { monitors: ['m'], secretRef: { name: 'ceph' } } },
      { name: 'c', projected: { sources: [{ secret: { name: 'proj' } }, { configMap: { name: 'cm' } }] } },
      { name: 'd', secret: { secretName: 'vol' } },
      { name: 'e', csi: { driver: 'd', nodePublishSecretRef: { name: 'csi' } } },
      { name: 'f', configMap: { name: 'cm' } },
      { name: 'g', iscsi: { targetPortal: 't', iqn: 'q', lun: 0 } },
    ],
  }))];
  assert.deepEqual(names, ['pull', 'init-from', 'env', 'eph', 'azure', 'ceph', 'proj', 'vol', 'csi']);
  assert.deepEqual([...podSecretNames(pod({ containers: [{ name: 'c' }], volumes: [{ name: 'x', emptyDir: {} }] }))], []);
});
