import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { configmaps, type ResourceDefinition, type StoredObject } from '@plinth/api';
import { beforeDelete, deletionFinalizers, markAsDeleting, shouldDeleteDependents, shouldOrphanDependents } from './delete.js';

describe('GC finalizers (kube deletionFinalizersForGarbageCollection)', () => {
  it('options first, then the finalizers present, then the default policy', () => {
    assert.equal(shouldOrphanDependents(undefined, [], {}), false);
    assert.equal(shouldOrphanDependents('OrphanDependents', [], {}), true);
    assert.equal(shouldOrphanDependents('OrphanDependents', ['foregroundDeletion'], {}), false);
    assert.equal(shouldOrphanDependents('OrphanDependents', [], { propagationPolicy: 'Background' }), false);
    assert.equal(shouldOrphanDependents(undefined, [], { orphanDependents: true }), true);
    assert.equal(shouldOrphanDependents(undefined, ['orphan'], {}), true);
    assert.equal(shouldDeleteDependents(undefined, ['foregroundDeletion'], {}), true);
    assert.equal(shouldDeleteDependents(undefined, ['foregroundDeletion'], { orphanDependents: false }), false);
    // Unsupported: never, whatever is asked.
    assert.equal(shouldOrphanDependents('Unsupported', ['orphan'], { propagationPolicy: 'Orphan' }), false);
    assert.equal(shouldDeleteDependents('Unsupported', [], { propagationPolicy: 'Foreground' }), false);
  });

  it('the new list keeps other finalizers in order; undefined when the set is unchanged', () => {
    assert.deepEqual(deletionFinalizers(undefined, ['a', 'orphan', 'b'], { propagationPolicy: 'Foreground' }), ['a', 'b', 'foregroundDeletion']);
    assert.equal(deletionFinalizers(undefined, ['orphan', 'a'], {}), undefined);
    assert.equal(deletionFinalizers(undefined, [], { propagationPolicy: 'Background' }), undefined);
    assert.deepEqual(deletionFinalizers(undefined, ['orphan'], { propagationPolicy: 'Background' }), []);
  });
});

describe('beforeDelete (kube rest.BeforeDelete)', () => {
  const graceful: ResourceDefinition = {
    ...configmaps,
    strategy: {
      ...configmaps.strategy,
      checkGracefulDelete: (_obj, opts) => {
        opts.gracePeriodSeconds ??= 30;
        return true;
      },
    },
  };
  const obj = (meta: Partial<StoredObject['metadata']> = {}): StoredObject => ({ metadata: { name: 'x', uid: 'u1', resourceVersion: '5', ...meta } });

  it('preconditions fail with kube 409s naming the kind', () => {
    assert.throws(
      () => beforeDelete(configmaps, obj(), { preconditions: { uid: 'u2' } }),
      (e: { code?: number; message?: string }) =>
        e.code === 409 && e.message === 'Operation cannot be fulfilled on ConfigMap "x": the UID in the precondition (u2) does not match the UID in record (u1). The object might have been deleted and then recreated',
    );
    assert.throws(() => beforeDelete(configmaps, obj(), { preconditions: { resourceVersion: '4' } }), /the ResourceVersion in the precondition \(4\) does not match the ResourceVersion in record \(5\)/);
  });

  it('a kind without graceful deletion is never graceful', () => {
    assert.deepEqual(beforeDelete(configmaps, obj(), { gracePeriodSeconds: 10 }), { graceful: false, pending: false });
  });

  it('first graceful delete: deadline now + grace, generation bumped; then shorter moves it, longer or none is pending', () => {
    const o = obj({ generation: 2 });
    const opts = {};
    const t0 = Date.now();
    assert.deepEqual(beforeDelete(graceful, o, opts), { graceful: true, pending: false });
    assert.equal(o.metadata.deletionGracePeriodSeconds, 30);
    assert.equal(o.metadata.generation, 3);
    const deadline = Date.parse(o.metadata.deletionTimestamp!);
    assert.ok(Math.abs(deadline - (t0 + 30_000)) < 2000);
    assert.deepEqual(beforeDelete(graceful, structuredClone(o), { gracePeriodSeconds: 60 }), { graceful: false, pending: true });
    const noGrace: { gracePeriodSeconds?: number } = {};
    assert.deepEqual(beforeDelete(graceful, structuredClone(o), noGrace), { graceful: false, pending: true });
    assert.equal(noGrace.gracePeriodSeconds, 30, 'the options take the running grace period');
    const shorter = structuredClone(o);
    assert.deepEqual(beforeDelete(graceful, shorter, { gracePeriodSeconds: 5 }), { graceful: true, pending: false });
    assert.equal(Date.parse(shorter.metadata.deletionTimestamp!), deadline - 25_000);
    assert.equal(shorter.metadata.generation, 3, 'shortening is no new generation');
    // A deletion whose grace is 0 (or unset) is finished now.
    assert.deepEqual(beforeDelete(graceful, obj({ deletionTimestamp: '2024-01-01T00:00:00Z', deletionGracePeriodSeconds: 0 }), {}), { graceful: false, pending: false });
  });

  it('a negative grace period counts as 1 s', () => {
    const o = obj();
    beforeDelete(graceful, o, { gracePeriodSeconds: -3 });
    assert.equal(o.metadata.deletionGracePeriodSeconds, 1);
  });

  it('markAsDeleting sets the timestamp once, grace 0, and bumps a counted generation on the first time', () => {
    const o = obj({ generation: 1 });
    markAsDeleting(o);
    assert.equal(o.metadata.generation, 2);
    assert.equal(o.metadata.deletionGracePeriodSeconds, 0);
    const ts = o.metadata.deletionTimestamp;
    markAsDeleting(o);
    assert.equal(o.metadata.generation, 2);
    assert.equal(o.metadata.deletionTimestamp, ts);
  });
});
