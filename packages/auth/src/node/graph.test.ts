import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '@plinth/api';
import { NodeGraph } from './graph.js';
import { createNodeAuthorizer, type NodeGraphHandlers } from './authorizer.js';

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

test("a pod event is skipped undecoded only when it cannot change the graph: never bound, or the known uid and node kept", () => {
  let pods: NodeGraphHandlers | undefined;
  createNodeAuthorizer({
    source: {
      subscribe: (kind, h) => {
        if (kind === 'pods') pods = h;
        return () => {};
      },
    },
  });
  const h = pods!;
  const key = '/registry/pods/ns/p';
  const unbound = pod('p', {});
  const bound = pod('p', { nodeName: 'n1', volumes: [{ name: 's', secret: { secretName: 's' } }] });
  const text = (o: StoredObject): string => JSON.stringify(o);
  // Never bound: nothing for the graph, whatever the event.
  for (const type of ['ADDED', 'MODIFIED', 'DELETED'] as const) assert.equal(h.mayMatter!(text(unbound), type, key), false, type);
  // The binding: the graph does not know the pod yet.
  assert.equal(h.mayMatter!(text(bound), 'MODIFIED', key), true);
  h.upsert(bound);
  // A status update keeps uid and node; a deletion, another node or another uid (recreated) matter.
  assert.equal(h.mayMatter!(text({ ...bound, status: { phase: 'Running' } }), 'MODIFIED', key), false);
  assert.equal(h.mayMatter!(text(bound), 'MODIFIED', undefined), true, 'no key: decoded');
  assert.equal(h.mayMatter!(text(bound), 'DELETED', key), true);
  assert.equal(h.mayMatter!(text({ ...bound, spec: { ...(bound['spec'] as object), nodeName: 'n2' } }), 'MODIFIED', key), true);
  assert.equal(h.mayMatter!(text({ ...bound, metadata: { ...bound.metadata, uid: 'uid-other' } }), 'MODIFIED', key), true);
  assert.equal(h.mayMatter!(text(bound), 'MODIFIED', '/registry/pods/other/p'), true, 'another namespace');
});
