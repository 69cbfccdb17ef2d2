import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../../field-errors.js';
import { setDefaultsPersistentVolumeClaim } from '../defaults/storage.js';
import type { JsonObject } from './json-fields.js';
import {
  normalizeDataSources,
  enforceDataSourceBackwardsCompatibility,
  validatePersistentVolumeClaim,
  validatePersistentVolumeClaimStatusUpdate,
  validatePersistentVolumeClaimTemplate,
  validatePersistentVolumeClaimUpdate,
} from './persistentvolumeclaim.js';

const texts = (errs: ReturnType<typeof validatePersistentVolumeClaim>): string[] => errs.map(fieldErrorString);
function pvc(spec: JsonObject = {}, extra: JsonObject = {}): JsonObject {
  const obj: JsonObject = { metadata: { name: 'c', namespace: 'ns', resourceVersion: '3' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec }, ...extra };
  setDefaultsPersistentVolumeClaim(obj);
  return obj;
}

describe('setDefaultsPersistentVolumeClaim', () => {
  it('sets phase Pending and volumeMode Filesystem', () => {
    const obj = pvc();
    assert.deepEqual(obj['status'], { phase: 'Pending' });
    assert.equal((obj['spec'] as JsonObject)['volumeMode'], 'Filesystem');
    assert.equal((pvc({ volumeMode: 'Block' })['spec'] as JsonObject)['volumeMode'], 'Block');
  });
});

describe('validatePersistentVolumeClaim', () => {
  it('accepts ordinary claims', () => {
    assert.deepEqual(texts(validatePersistentVolumeClaim(pvc({ storageClassName: 'fast', selector: { matchLabels: { app: 'db' } } }))), []);
    assert.deepEqual(texts(validatePersistentVolumeClaim(pvc({ dataSource: { kind: 'VolumeSnapshot', apiGroup: 'snapshot.storage.k8s.io', name: 's' } }))), []);
  });

  it('requires access modes and a positive whole storage request, at kube’s paths', () => {
    assert.deepEqual(texts(validatePersistentVolumeClaim(pvc({ accessModes: [], resources: {} }))), [
      'spec.accessModes: Required value: at least 1 access mode is required',
      'spec.resources[storage]: Required value',
    ]);
    assert.deepEqual(texts(validatePersistentVolumeClaim(pvc({ resources: { requests: { storage: '0' } } }))), ['spec.resources[storage]: Invalid value: "0": must be greater than zero']);
    assert.deepEqual(texts(validatePersistentVolumeClaim(pvc({ accessModes: ['ReadWriteMany', 'Bogus'] }))), [
      'spec.accessModes: Unsupported value: "Bogus": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce"',
    ]);
  });

  it('checks the selector, class, volumeMode and data sources', () => {
    assert.deepEqual(
      texts(
        validatePersistentVolumeClaim(
          pvc({
            selector: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
            storageClassName: 'Bad_Class',
            volumeMode: 'Raw',
            dataSource: { kind: 'Snapshot', name: '' },
            dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'p' },
          }),
        ),
      ),
      [
        "spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        "spec.storageClassName: Invalid value: \"Bad_Class\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
        'spec.dataSource.name: Required value',
        'spec.dataSource: Invalid value: "Snapshot"',
        'spec: Invalid value: field.Path{name:"dataSource", index:"", parent:(*field.Path)(0xc000a1c080)}: must match dataSourceRef',
      ],
    );
  });
});

describe('PersistentVolumeClaim updates', () => {
  const bound = { status: { phase: 'Bound' } };

  it('lets a bound claim grow its storage request, and nothing else', () => {
    const old = pvc({}, bound);
    assert.deepEqual(texts(validatePersistentVolumeClaimUpdate(pvc({ resources: { requests: { storage: '2Gi' } } }, bound), old)), []);
    assert.deepEqual(texts(validatePersistentVolumeClaimUpdate(pvc({ resources: { requests: { storage: '1024Mi' } } }, bound), old)), []);
    assert.deepEqual(texts(validatePersistentVolumeClaimUpdate(pvc({ resources: { requests: { storage: '512Mi' } } }, bound), old)), [
      'spec.resources.requests.storage: Forbidden: field can not be less than previous value',
    ]);
    const errs = texts(validatePersistentVolumeClaimUpdate(pvc({ accessModes: ['ReadWriteMany'] }, bound), old));
    assert.equal(errs.length, 1);
    assert.match(errs[0]!, /^spec: Forbidden: spec is immutable after creation except resources.requests for bound claims\n- \taccessModes: \["ReadWriteOnce"\]\n\+ \taccessModes: \["ReadWriteMany"\]$/);
  });

  it('forbids resizing an unbound claim, but lets volumeName be set once', () => {
    const old = pvc();
    assert.match(texts(validatePersistentVolumeClaimUpdate(pvc({ resources: { requests: { storage: '2Gi' } } }), old))[0]!, /^spec: Forbidden: spec is immutable/);
    assert.deepEqual(texts(validatePersistentVolumeClaimUpdate(pvc({ volumeName: 'pv-1' }), old)), []);
    assert.equal(texts(validatePersistentVolumeClaimUpdate(pvc({ volumeName: 'pv-2' }), pvc({ volumeName: 'pv-1' }))).length, 1);
  });

  it('keeps the beta storage-class annotation unless it moves to storageClassName', () => {
    const ann = (v: string): JsonObject => ({ metadata: { name: 'c', resourceVersion: '3', annotations: { 'volume.beta.kubernetes.io/storage-class': v } } });
    const old = pvc({}, ann('gold'));
    assert.deepEqual(texts(validatePersistentVolumeClaimUpdate(pvc({ storageClassName: 'gold' }, ann('gold')), old)), []);
    assert.deepEqual(texts(validatePersistentVolumeClaimUpdate(pvc({}, ann('silver')), old)), [
      'metadata.annotations.volume.beta.kubernetes.io/storage-class: Invalid value: "silver": field is immutable',
    ]);
  });

  it('checks status updates as kube does (resourceVersion, Spec.accessModes, capacities)', () => {
    const next = pvc({ accessModes: [] }, { status: { capacity: { storage: '-1' } } });
    (next['metadata'] as JsonObject)['resourceVersion'] = '';
    assert.deepEqual(texts(validatePersistentVolumeClaimStatusUpdate(next, pvc())), [
      'resourceVersion: Required value',
      'Spec.accessModes: Required value',
      'status.capacity[storage]: Invalid value: -1: must be a valid resource quantity',
    ]);
  });
});

describe('claim templates and data sources', () => {
  it('allows only labels and annotations in a template’s metadata', () => {
    const template = { metadata: { labels: { a: 'b' }, name: 'x', uid: 'u' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    assert.deepEqual(texts(validatePersistentVolumeClaimTemplate(template, 'spec.volumes[0].ephemeral.volumeClaimTemplate')), [
      'spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.name: Forbidden: cannot be set for an ephemeral volume',
      'spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.uID: Forbidden: cannot be set for an ephemeral volume',
    ]);
  });

  it('normalizes dataSource and dataSourceRef as kube’s strategy does', () => {
    const spec: JsonObject = { dataSource: { kind: 'Foo', apiGroup: 'x.io', name: 'f' } };
    enforceDataSourceBackwardsCompatibility(spec);
    assert.deepEqual(spec, {});
    // A dataSourceRef beside it, or an old claim with either source, keeps it (1.22+).
    const both: JsonObject = { dataSource: { kind: 'Foo', apiGroup: 'x.io', name: 'f' }, dataSourceRef: { kind: 'Foo', apiGroup: 'x.io', name: 'f' } };
    enforceDataSourceBackwardsCompatibility(both);
    assert.ok(both['dataSource']);
    const updated: JsonObject = { dataSource: { kind: 'Foo', apiGroup: 'x.io', name: 'f' } };
    enforceDataSourceBackwardsCompatibility(updated, { dataSourceRef: { kind: 'Foo', apiGroup: 'x.io', name: 'f' } });
    assert.ok(updated['dataSource']);
    const ref: JsonObject = { dataSourceRef: { kind: 'Foo', apiGroup: 'x.io', name: 'f' } };
    normalizeDataSources(ref);
    assert.deepEqual(ref['dataSource'], { kind: 'Foo', apiGroup: 'x.io', name: 'f' });
  });
});
