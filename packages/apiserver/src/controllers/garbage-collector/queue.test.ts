import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createGCQueue } from './queue.js';
import type { Logger } from '../../log.js';

const log = { v: () => undefined } as unknown as Logger;
const tick = (ms = 5): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('runs up to `workers` keys at once, one key never twice at once; a key added while it runs runs again after', async () => {
  let running = 0;
  let peak = 0;
  const runs: string[] = [];
  const busy = new Set<string>();
  const q = createGCQueue({
    name: 't',
    workers: 2,
    log,
    async process(key) {
      assert.equal(busy.has(key), false, `${key} ran twice at once`);
      busy.add(key);
      running++;
      peak = Math.max(peak, running);
      runs.push(key);
      await tick(10);
      running--;
      busy.delete(key);
      return 'forget';
    },
  });
  q.add('a');
  q.add('b');
  q.add('c');
  assert.equal(q.depth(), 3, 'nothing runs before run()');
  q.run();
  await tick(2);
  q.add('a');
  q.add('a');
  await tick(80);
  assert.equal(peak, 2);
  assert.deepEqual(runs.sort(), ['a', 'a', 'b', 'c']);
  q.stop();
});

test('requeue retries with a growing backoff until forgotten', async () => {
  let n = 0;
  const q = createGCQueue({ name: 't', workers: 1, log, process: async () => (++n < 4 ? 'requeue' : 'forget') });
  q.run();
  q.add('k');
  await tick(150);
  assert.equal(n, 4);
  q.stop();
});
