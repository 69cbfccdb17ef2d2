import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { WatchEvent } from './interface.js';
import { QueueWatcher, SharedFeed } from './watcher.js';

const ev = (name: string, size = 10): WatchEvent => ({ type: 'ADDED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }, size });

test('QueueWatcher.notify: one synchronous wake-up per arming, by the next event', () => {
  let stopped = 0;
  const w = new QueueWatcher({ events: 10, bytes: 1000 }, () => stopped++);
  let wakes = 0;
  assert.equal(w.notify(() => wakes++), true);
  w.push(ev('a'));
  assert.equal(wakes, 1, 'woken by the push, before it returns');
  w.push(ev('b'));
  assert.equal(wakes, 1, 'armed once, woken once');
  // Events are ready: nothing to arm, poll gives them in order.
  assert.equal(w.notify(() => wakes++), false);
  assert.equal((w.poll() as { object: { metadata: { name: string } } }).object.metadata.name, 'a');
  assert.equal((w.poll() as { object: { metadata: { name: string } } }).object.metadata.name, 'b');
  assert.equal(w.poll(), undefined);
  assert.equal(stopped, 0);
});

test('QueueWatcher.notify: the end wakes too, and an ended or overflowing watch arms nothing', () => {
  const w = new QueueWatcher({ events: 2, bytes: 1000 }, () => undefined);
  let wakes = 0;
  assert.equal(w.notify(() => wakes++), true);
  w.stop();
  assert.equal(wakes, 1, 'stop wakes the consumer, which then finds the end');
  assert.equal(w.poll(), undefined);
  assert.equal(w.notify(() => wakes++), false, 'ended: next() tells the consumer');

  // A consumer too far behind: the push that overflows ends the watch and wakes it once.
  const slow = new QueueWatcher({ events: 2, bytes: 1000 }, () => undefined);
  slow.push(ev('1'));
  slow.push(ev('2'));
  let slowWakes = 0;
  assert.equal(slow.notify(() => slowWakes++), false, 'events are queued');
  slow.poll();
  slow.poll();
  assert.equal(slow.notify(() => slowWakes++), true);
  slow.push(ev('3'));
  slow.push(ev('4'));
  slow.push(ev('5'));
  assert.equal(slow.ended, true);
  assert.equal(slowWakes, 1);
});

test('QueueWatcher.notify: not armed while initial events are pending or next() waits', async () => {
  let done = false;
  const initial = { get done() { return done; }, poll: () => undefined, fill: async () => { done = true; }, close: () => undefined };
  const w = new QueueWatcher({ events: 10, bytes: 1000 }, () => undefined, initial);
  assert.equal(w.notify(() => undefined), false);
  const next = w.next();
  assert.equal(w.notify(() => undefined), false, 'next() is waiting');
  w.push(ev('x'));
  assert.equal(((await next) as { object: { metadata: { name: string } } }).object.metadata.name, 'x');
  assert.equal(w.notify(() => undefined), true);
});

test('SharedFeed: events every reader has read are dropped; a reader that stops reading pins them until it ends', () => {
  const feed = new SharedFeed({ events: 5000, bytes: 1e9 });
  const reader = new QueueWatcher(feed.limits, () => undefined);
  reader.attach(feed);
  for (let i = 0; i < 20_000; i++) {
    feed.append(ev(`e${i}`), i + 1);
    assert.equal((reader.poll() as { object: { metadata: { name: string } } }).object.metadata.name, `e${i}`);
  }
  assert.ok(feed.held <= 4096 + 64, `held ${feed.held}`);
  const idle = new QueueWatcher(feed.limits, () => undefined);
  idle.attach(feed);
  for (let i = 0; i < 4000; i++) {
    feed.append(ev(`f${i}`), 30_000 + i);
    reader.poll();
  }
  assert.equal(idle.ended, false);
  assert.ok(feed.held >= 4000, 'the idle reader\'s events are kept');
  for (let i = 0; i < 2000; i++) {
    feed.append(ev(`g${i}`), 40_000 + i);
    reader.poll();
  }
  assert.equal(idle.ended, true, 'past 5,000 events behind (with at most 64 of slack)');
  assert.ok(feed.held <= 4096 + 64, `held ${feed.held} once the idle reader is gone`);
});

test('SharedFeed: watchers that waited on a quiet feed and went away are not kept', () => {
  const feed = new SharedFeed({ events: 100, bytes: 1e6 });
  const stay = new QueueWatcher(feed.limits, () => undefined);
  stay.attach(feed);
  let woken = 0;
  assert.equal(stay.notify(() => woken++), true);
  // A thousand watches come, wait and end (timeouts) while nothing changes.
  for (let i = 0; i < 1000; i++) {
    const w = new QueueWatcher(feed.limits, () => undefined);
    w.attach(feed);
    assert.equal(w.notify(() => undefined), true);
    w.stop();
  }
  assert.ok(feed.armed <= 66, `armed ${feed.armed}`);
  feed.append(ev('x'), 2);
  assert.equal(woken, 1, 'the watcher that stayed is still woken by the next event');
  assert.equal(stay.poll()?.type, 'ADDED');
  assert.equal(feed.armed, 0);
});
