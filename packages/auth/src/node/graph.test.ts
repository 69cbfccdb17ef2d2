import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '@plinth/api';
import { NodeGraph } from './graph.js';

const pod = (name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): StoredObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, ...(annotations ? { annotations } : {}) },
  spec: { containers: [{ name: 'c', image: 'i' }], ...spec },
});

test("a pod's references, its PVC's PV and that PV's kubelet-visible secrets reach the pod's node only", () => {
  const g = new NodeGraph();
  g.setPod(
    pod('p', {
      nodeName: 'n1',
      serviceAccountName: 'sa',
      imagePullSecrets: [{ name: 'pull' }],
      initContainers: [{ name: 'i', image: 'i', env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 'env', key: 'k' } } }] }],
      volumes: [
        { name: 'proj', projected: { sources: [{ configMap: { name: 'cm' } }, { secret: { name: 'projected' } }] } },
        { name: 'claim', persistentVolumeClaim: { claimName: 'data' } },
        { name: 'eph', ephemeral: { volumeClaimTemplate: { spec: {} } } },
      ],
    }),
  );
  g.setPV({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pv' },
    spec: { claimRef: { namespace: 'ns', name: 'data' }, csi: { driver: 'd', volumeHandle: 'h', nodeStageSecretRef: { namespace: 'other', name: 'stage' }, controllerPublishSecretRef: { namespace: 'ns', name: 'ctrl' } } },
  });
  for (const [type, ns, name] of [
    ['serviceaccount', 'ns', 'sa'],
    ['secret', 'ns', 'pull'],
    ['secret', 'ns', 'env'],
    ['secret', 'ns', 'projected'],
    ['configmap', 'ns', 'cm'],
    ['pvc', 'ns', 'data'],
    ['pvc', 'ns', 'p-eph'],
    ['pv', '', 'pv'],
    ['secret', 'other', 'stage'],
  ] as const) {
    assert.equal(g.reaches('n1', type, ns, name), true, `${type} ${ns}/${name}`);
    assert.equal(g.reaches('n2', type, ns, name), false, `${type} ${ns}/${name} from n2`);
  }
  // The controller-side CSI secret is not the kubelet's.
  assert.equal(g.reaches('n1', 'secret', 'ns', 'ctrl'), false);
  g.deletePod(pod('p', {}));
  assert.equal(g.reaches('n1', 'secret', 'other', 'stage'), false);
  assert.equal(g.reaches('n1', 'secret', 'ns', 'pull'), false);
});

test('mirror pods link to nothing; unscheduled pods are ignored; attachments name their node', () => {
  const g = new NodeGraph();
  g.setPod(pod('m', { nodeName: 'n1', volumes: [{ name: 's', secret: { secretName: 's' } }] }, { 'kubernetes.io/config.mirror': 'x' }));
  g.setPod(pod('u', { volumes: [{ name: 's', secret: { secretName: 'u' } }] }));
  assert.equal(g.reaches('n1', 'secret', 'ns', 's'), false);
  assert.equal(g.reaches('n1', 'secret', 'ns', 'u'), false);
  g.setVolumeAttachment({ apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: 'va' }, spec: { nodeName: 'n1' } });
  assert.equal(g.reaches('n1', 'volumeattachment', '', 'va'), true);
  assert.equal(g.reaches('n2', 'volumeattachment', '', 'va'), false);
  g.deleteVolumeAttachment({ apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: 'va' } });
  assert.equal(g.reaches('n1', 'volumeattachment', '', 'va'), false);
});
