import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '@plinth/api';
import { StorageError, type GetOptions, type ListOptions, type ListResult } from '@plinth/storage';
import { createRevisionGets, createRevisionLists, type RevisionedStore } from './revision-lists.js';

/** A store whose list answers its current items and counts the lists it answered. */
function fakeStore(items: StoredObject[], revision: number | undefined): RevisionedStore & { lists: number; gets: number; items: StoredObject[]; appliedRevision: number | undefined } {
  const s = {
    lists: 0,
    items,
    appliedRevision: revision,
    async list(_prefix: string, opts?: ListOptions): Promise<ListResult> {
      assert.equal(opts?.resourceVersion, '0');
      s.lists++;
      return { items: [...s.items], resourceVersion: String(s.appliedRevision ?? 0), continue: '' };
    },
    gets: 0,
    async get(key: string, opts?: GetOptions): Promise<StoredObject> {
      assert.equal(opts?.resourceVersion, '0');
      s.gets++;
      const found = s.items.find((o) => key.endsWith(`/${o.metadata.name}`));
      if (!found) throw new StorageError('NotFound', key, `key not found: ${key}`);
      return found;
    },
  };
  return s;
}

const obj = (name: string): StoredObject => ({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name, namespace: 'a' } });

describe('createRevisionLists', () => {
  it('reuses a list while the revision holds and lists again once it moves', async () => {
    const lists = createRevisionLists();
    const store = fakeStore([obj('x')], 5);
    assert.deepEqual((await lists(store, '/registry/limitranges/a/')).map((o) => o.metadata.name), ['x']);
    assert.deepEqual((await lists(store, '/registry/limitranges/a/')).map((o) => o.metadata.name), ['x']);
    assert.equal(store.lists, 1);
    store.items = [obj('x'), obj('y')];
    store.appliedRevision = 6;
    assert.deepEqual((await lists(store, '/registry/limitranges/a/')).map((o) => o.metadata.name), ['x', 'y']);
    assert.equal(store.lists, 2);
    // Another prefix is a list of its own.
    await lists(store, '/registry/limitranges/b/');
    assert.equal(store.lists, 3);
  });

  it('keeps nothing while the store has no revision, nor lists longer than the bound', async () => {
    const lists = createRevisionLists({ maxItems: 2 });
    const unready = fakeStore([obj('x')], undefined);
    await lists(unready, '/p/');
    await lists(unready, '/p/');
    assert.equal(unready.lists, 2);
    const big = fakeStore([obj('x'), obj('y'), obj('z')], 1);
    await lists(big, '/q/');
    await lists(big, '/q/');
    assert.equal(big.lists, 2);
  });

  it('answers each caller an array of its own', async () => {
    const lists = createRevisionLists();
    const store = fakeStore([obj('x')], 1);
    const first = await lists(store, '/p/');
    first.push(obj('intruder'));
    assert.deepEqual((await lists(store, '/p/')).map((o) => o.metadata.name), ['x']);
  });
});

describe('createRevisionGets', () => {
  it('reuses an object found while the revision holds; a miss is asked again and answered undefined', async () => {
    const gets = createRevisionGets();
    const store = fakeStore([obj('x')], 3);
    const first = await gets(store, '/registry/namespaces/x');
    assert.equal(first?.metadata.name, 'x');
    assert.equal(await gets(store, '/registry/namespaces/x'), first);
    assert.equal(store.gets, 1);
    assert.equal(await gets(store, '/registry/namespaces/y'), undefined);
    assert.equal(await gets(store, '/registry/namespaces/y'), undefined);
    assert.equal(store.gets, 3);
    store.items = [{ ...obj('x'), metadata: { name: 'x', labels: { changed: 'yes' } } }];
    store.appliedRevision = 4;
    assert.deepEqual((await gets(store, '/registry/namespaces/x'))?.metadata.labels, { changed: 'yes' });
    assert.equal(store.gets, 4);
  });
});
