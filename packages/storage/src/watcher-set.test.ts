import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '@plinth/api';
import { CacheWatcher, type CacheEvent } from './cache-watcher.js';
import { WatcherSet } from './watcher-set.js';
import { DEFAULT_WATCHER_LIMITS } from './watcher.js';

const pod = (name: string, node: string): StoredObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', resourceVersion: '1' }, spec: { nodeName: node } });
const nodeOf = (o: StoredObject): string => String((o['spec'] as { nodeName?: string } | undefined)?.nodeName ?? '');

/** A watcher of pods on `node` (selector spec.nodeName=node) counting the predicate's calls. */
function watcher(node: string, calls: { n: number }): CacheWatcher {
  return new CacheWatcher({
    key: '/registry/pods/',
    exact: false,
    predicate: (o) => {
      calls.n++;
      return nodeOf(o) === node;
    },
    bookmarks: false,
    startRv: 0,
    limits: DEFAULT_WATCHER_LIMITS,
    onStop: () => undefined,
  });
}

function event(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: StoredObject, prev?: StoredObject): CacheEvent {
  return { key: `/registry/pods/ns/${obj.metadata.name}`, rev: 2, obj, prev, natural: { type, object: obj } };
}

const drain = (w: CacheWatcher): string[] => {
  const out: string[] = [];
  for (let e = w.queue.poll(); e; e = w.queue.poll()) out.push(`${e.type} ${e.type === 'ERROR' ? '' : String(e.object.metadata.name)}`);
  return out;
};

describe('WatcherSet', () => {
  it('offers an event only to the watchers filed under the object\'s value now or before', () => {
    const set = new WatcherSet(nodeOf);
    const calls = { n: 0 };
    const ws = Array.from({ length: 100 }, (_, i) => watcher(`node-${i}`, calls));
    ws.forEach((w, i) => set.add(w, `node-${i}`));
    set.deliver(event('ADDED', pod('a', 'node-7')));
    // Bound elsewhere: it leaves node-7's selection and enters node-8's.
    set.deliver(event('MODIFIED', pod('a', 'node-8'), pod('a', 'node-7')));
    set.deliver(event('DELETED', pod('a', 'node-8'), pod('a', 'node-8')));
    assert.deepEqual(drain(ws[7]!), ['ADDED a', 'DELETED a']);
    assert.deepEqual(drain(ws[8]!), ['ADDED a', 'DELETED a']);
    assert.deepEqual(ws.filter((_, i) => i !== 7 && i !== 8).flatMap(drain), []);
    // Without the index every watcher would have evaluated its selector for every event (≥ 300).
    assert.ok(calls.n <= 8, `selector evaluated ${calls.n} times`);
  });

  it('offers every event to unindexed watchers, and forgets removed ones', () => {
    const set = new WatcherSet(nodeOf);
    const calls = { n: 0 };
    const plain = watcher('node-1', calls);
    const indexed = watcher('node-1', calls);
    set.add(plain);
    set.add(indexed, 'node-1');
    assert.equal(set.size, 2);
    set.deliver(event('ADDED', pod('a', 'node-2')));
    set.deliver(event('ADDED', pod('b', 'node-1')));
    assert.deepEqual(drain(plain), ['ADDED b']);
    assert.deepEqual(drain(indexed), ['ADDED b']);
    set.delete(indexed);
    assert.equal(set.size, 1);
    set.deliver(event('ADDED', pod('c', 'node-1')));
    assert.deepEqual(drain(indexed), []);
    assert.deepEqual(drain(plain), ['ADDED c']);
    set.endAll();
    assert.equal(set.size, 0);
  });

  it('without an index files every watcher as unindexed', () => {
    const set = new WatcherSet();
    const calls = { n: 0 };
    const w = watcher('node-1', calls);
    set.add(w, 'node-2');
    set.deliver(event('ADDED', pod('a', 'node-1')));
    assert.deepEqual(drain(w), ['ADDED a']);
  });
});
