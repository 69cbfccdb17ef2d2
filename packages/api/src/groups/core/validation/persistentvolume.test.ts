import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../../field-errors.js';
import { setDefaultsPersistentVolume } from '../defaults/storage.js';
import type { JsonObject } from './json-fields.js';
import { validatePersistentVolume, validatePersistentVolumeStatusUpdate, validatePersistentVolumeUpdate } from './persistentvolume.js';

const texts = (errs: ReturnType<typeof validatePersistentVolume>): string[] => errs.map(fieldErrorString);
function pv(spec: JsonObject, meta: JsonObject = {}): JsonObject {
  const obj: JsonObject = { metadata: { name: 'pv1', resourceVersion: '5', ...meta }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], ...spec } };
  setDefaultsPersistentVolume(obj);
  return obj;
}

describe('setDefaultsPersistentVolume', () => {
  it('sets phase, reclaim policy, volumeMode and source defaults as kube does', () => {
    const obj = pv({ hostPath: { path: '/data' } });
    assert.deepEqual(obj['status'], { phase: 'Pending' });
    assert.deepEqual(obj['spec'], {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      hostPath: { path: '/data', type: '' },
      persistentVolumeReclaimPolicy: 'Retain',
      volumeMode: 'Filesystem',
    });
    const rbd = pv({ rbd: { monitors: ['m'], image: 'i' }, azureDisk: { diskName: 'd', diskURI: 'https://x' } });
    assert.deepEqual((rbd['spec'] as JsonObject)['rbd'], { monitors: ['m'], image: 'i', pool: 'rbd', user: 'admin', keyring: '/etc/ceph/keyring' });
    assert.deepEqual((rbd['spec'] as JsonObject)['azureDisk'], { diskName: 'd', diskURI: 'https://x', cachingMode: 'ReadWrite', kind: 'Shared', fsType: 'ext4', readOnly: false });
  });
});

describe('validatePersistentVolume', () => {
  it('accepts ordinary volumes', () => {
    assert.deepEqual(texts(validatePersistentVolume(pv({ nfs: { server: 'nfs.example', path: '/exports' } }))), []);
    assert.deepEqual(
      texts(
        validatePersistentVolume(
          pv({
            local: { path: '/mnt/disks/ssd1' },
            storageClassName: 'local-storage',
            nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }] }] } },
          }),
        ),
      ),
      [],
    );
    assert.deepEqual(texts(validatePersistentVolume(pv({ csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-1' } }))), []);
  });

  it('requires access modes, a storage capacity and one volume type', () => {
    assert.deepEqual(texts(validatePersistentVolume(pv({ accessModes: [], capacity: { storage: '0', cpu: '1' } }))), [
      'spec.accessModes: Required value',
      'spec.capacity: Unsupported value: core.ResourceList{"cpu":resource.Quantity{i:resource.int64Amount{value:1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1", Format:"DecimalSI"}, "storage":resource.Quantity{i:resource.int64Amount{value:0, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"0", Format:"DecimalSI"}}: supported values: "storage"',
      'spec.capacity[storage]: Invalid value: "0": must be greater than zero',
      'spec: Required value: must specify a volume type',
    ]);
  });

  it('reports unsupported enums and a second volume type with kube’s paths', () => {
    assert.deepEqual(
      texts(
        validatePersistentVolume(
          pv({ accessModes: ['ReadWriteOncePod'], persistentVolumeReclaimPolicy: 'Keep', volumeMode: 'Raw', hostPath: { path: '/' }, cephfs: { monitors: [] }, gcePersistentDisk: { pdName: 'd' } }),
        ),
      ),
      [
        'spec.accessModes: Unsupported value: "ReadWriteOncePod": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce"',
        'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"',
        'spec.gcePersistentDisk: Forbidden: may not specify more than 1 volume type',
        'spec.cephFS: Forbidden: may not specify more than 1 volume type',
        'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
      ],
    );
    assert.deepEqual(texts(validatePersistentVolume(pv({ hostPath: { path: '/' }, persistentVolumeReclaimPolicy: 'Recycle' }))), [
      "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'",
    ]);
    assert.deepEqual(texts(validatePersistentVolume(pv({ gcePersistentDisk: { partition: 300 } }))), [
      'spec.persistentDisk.pdName: Required value',
      'spec.persistentDisk.partition: Invalid value: 300: must be between 1 and 255, inclusive',
    ]);
  });

  it('requires node affinity for local volumes and validates node selectors', () => {
    assert.deepEqual(texts(validatePersistentVolume(pv({ local: { path: '/a/../b' } }))), [
      "spec.local.path: Invalid value: \"/a/../b\": must not contain '..'",
      'spec.nodeAffinity: Required value: Local volume requires node affinity',
    ]);
    assert.deepEqual(texts(validatePersistentVolume(pv({ local: { path: '/d' }, nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'Gt', values: [] }], matchFields: [{ key: 'spec.nodeName', operator: 'In', values: ['a'] }] }] } } }))), [
      "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
      'spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0].key: Invalid value: "spec.nodeName": not a valid field selector key',
    ]);
    assert.deepEqual(texts(validatePersistentVolume(pv({ local: { path: '/d' }, nodeAffinity: {} }))), ['spec.nodeAffinity.required: Required value: must specify required node constraints']);
  });

  it('forbids the mount-options annotation on sources without mount options', () => {
    assert.deepEqual(texts(validatePersistentVolume(pv({ hostPath: { path: '/d' } }, { annotations: { 'volume.beta.kubernetes.io/mount-options': 'ro' } }))), [
      'metadata.annotations.volume.beta.kubernetes.io/mount-options: Forbidden: may not specify mount options for this volume type',
    ]);
    assert.deepEqual(texts(validatePersistentVolume(pv({ nfs: { server: 's', path: '/e' } }, { annotations: { 'volume.beta.kubernetes.io/mount-options': 'ro' } }))), []);
  });
});

describe('PersistentVolume updates', () => {
  it('keeps the source, volumeMode and a set node affinity immutable', () => {
    const old = pv({ nfs: { server: 's', path: '/e' } });
    assert.deepEqual(texts(validatePersistentVolumeUpdate(pv({ nfs: { server: 's', path: '/e' }, capacity: { storage: '2Gi' } }), old)), []);
    const errs = texts(validatePersistentVolumeUpdate(pv({ nfs: { server: 's', path: '/f' }, volumeMode: 'Block' }), old));
    assert.equal(errs.length, 2);
    assert.match(errs[0]!, /^spec\.persistentvolumesource: Forbidden: spec\.persistentvolumesource is immutable after creation\n- \tnfs: /);
    assert.equal(errs[1], 'volumeMode: Invalid value: "Block": field is immutable');
  });

  it('lets a CSI volume gain a controllerExpandSecretRef', () => {
    const old = pv({ csi: { driver: 'd.example.com', volumeHandle: 'h' } });
    const next = pv({ csi: { driver: 'd.example.com', volumeHandle: 'h', controllerExpandSecretRef: { name: 's', namespace: 'ns' } } });
    assert.deepEqual(texts(validatePersistentVolumeUpdate(next, old)), []);
  });

  it('requires a resourceVersion on status updates', () => {
    assert.deepEqual(texts(validatePersistentVolumeStatusUpdate(pv({}, { resourceVersion: '' }), pv({}))), ['resourceVersion: Required value']);
  });
});
