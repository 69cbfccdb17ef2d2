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

/** A watcher of every pod under `key` (no selector: it reads its key's shared feed). */
function plainWatcher(opts: { key?: string; exact?: boolean; limits?: { events: number; bytes: number }; bookmarks?: boolean; onStop?: () => void } = {}): CacheWatcher {
  return new CacheWatcher({
    key: opts.key ?? '/registry/pods/ns/',
    exact: opts.exact ?? false,
    bookmarks: opts.bookmarks ?? false,
    startRv: 1,
    limits: opts.limits ?? DEFAULT_WATCHER_LIMITS,
    onStop: opts.onStop ?? (() => undefined),
  });
}

const added = (name: string, rev: number, size = 100): CacheEvent => {
  const obj = pod(name, '');
  return { key: `/registry/pods/ns/${name}`, rev, obj, prev: undefined, natural: { type: 'ADDED', object: obj, size } };
};

describe('WatcherSet: watchers without a selector share one feed per key', () => {
  it('each reads every event of its key or prefix, in order, the same event objects', () => {
    const set = new WatcherSet();
    const a = plainWatcher();
    const b = plainWatcher();
    const one = plainWatcher({ key: '/registry/pods/ns/x', exact: true });
    const other = plainWatcher({ key: '/registry/pods/other/' });
    for (const w of [a, b, one, other]) set.add(w);
    const evs = [added('w', 2), added('x', 3), added('y', 4)];
    for (const e of evs) set.deliver(e);
    assert.deepEqual(drain(a), ['ADDED w', 'ADDED x', 'ADDED y']);
    assert.deepEqual(drain(one), ['ADDED x']);
    assert.deepEqual(drain(other), []);
    // b reads later, from its own position; the objects are the cache's, not copies.
    const first = b.queue.poll();
    assert.equal(first, evs[0]!.natural);
    assert.deepEqual(drain(b), ['ADDED x', 'ADDED y']);
    assert.equal(a.lastRv, 4, 'a bookmark is due only past the last event it was given');
    assert.equal(one.lastRv, 3);
    assert.equal(other.lastRv, 1);
  });

  it('a waiting consumer is woken once by the next event; next() gets it', async () => {
    const set = new WatcherSet();
    const a = plainWatcher();
    const b = plainWatcher();
    set.add(a);
    set.add(b);
    let wakes = 0;
    assert.equal(a.queue.notify(() => wakes++), true);
    const pending = b.queue.next();
    set.deliver(added('w', 2));
    set.deliver(added('x', 3));
    assert.equal(wakes, 1, 'woken by the first event, before deliver returns');
    assert.equal(a.queue.notify(() => wakes++), false, 'events are ready: nothing armed');
    assert.deepEqual(drain(a), ['ADDED w', 'ADDED x']);
    assert.equal((await pending)?.type, 'ADDED');
    assert.deepEqual(drain(b), ['ADDED x']);
  });

  it('a bookmark pushed to one watcher follows the feed events before it, precedes those after', () => {
    const set = new WatcherSet();
    const a = plainWatcher({ bookmarks: true });
    set.add(a);
    set.deliver(added('w', 2));
    set.deliver(added('x', 3));
    a.queue.push({ type: 'BOOKMARK', object: { apiVersion: 'v1', kind: 'Pod', metadata: { resourceVersion: '3' } } });
    set.deliver(added('y', 4));
    assert.deepEqual(drain(a), ['ADDED w', 'ADDED x', 'BOOKMARK undefined', 'ADDED y']);
  });

  it('a watcher too far behind is ended; one that reads goes on; ended ones keep what they had', () => {
    const set = new WatcherSet();
    let stopped = 0;
    const limits = { events: 100, bytes: 1_000_000 };
    const slow = plainWatcher({ limits, onStop: () => stopped++ });
    const reader = plainWatcher({ limits });
    set.add(slow);
    set.add(reader);
    let got = 0;
    for (let i = 0; i < 1000; i++) {
      set.deliver(added(`p${i}`, i + 2, 10));
      got += drain(reader).length;
    }
    assert.equal(slow.queue.ended, true, 'past its events bound');
    assert.equal(stopped, 1);
    assert.equal(slow.queue.poll(), undefined, 'stopped: its backlog is dropped');
    assert.equal(got, 1000);
    assert.equal(reader.queue.ended, false);

    // The bytes bound ends a watcher at the event that passes it (its own feed: other limits).
    const byBytes = plainWatcher({ key: '/registry/pods/', limits: { events: 10_000, bytes: 1000 } });
    set.add(byBytes);
    for (let i = 0; i < 9; i++) set.deliver(added(`q${i}`, 2000 + i, 100));
    assert.equal(byBytes.queue.ended, false, '900 bytes queued');
    set.deliver(added('q9', 2010, 101));
    assert.equal(byBytes.queue.ended, true, '1,001 bytes queued');

    // The cache ending every watch: each still gets what it was sent, then the end.
    set.deliver(added('last', 3000));
    set.endAll();
    assert.deepEqual(drain(reader).slice(-1), ['ADDED last']);
    assert.equal(reader.queue.ended, true);
  });

  it('a selector watcher of the same key still gets its own translation; removal dissolves the feed', () => {
    const set = new WatcherSet();
    const calls = { n: 0 };
    const selective = watcher('node-1', calls);
    const plain = plainWatcher({ key: '/registry/pods/' });
    set.add(selective);
    set.add(plain);
    set.deliver(event('ADDED', pod('a', 'node-2')));
    set.deliver(event('MODIFIED', pod('a', 'node-1'), pod('a', 'node-2')));
    assert.deepEqual(drain(selective), ['ADDED a']);
    assert.deepEqual(drain(plain), ['ADDED a', 'MODIFIED a']);
    plain.queue.stop();
    set.delete(plain);
    assert.equal(set.size, 1);
    set.deliver(event('ADDED', pod('b', 'node-1')));
    assert.deepEqual(drain(plain), []);
    assert.deepEqual(drain(selective), ['ADDED b']);
  });
});
