import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { mallocAddon } from './malloc.js';

/** The Makefile builds the addon exactly when these headers exist (and g++, which CI has). */
const HEADERS = existsSync(resolve(process.execPath, '../../include/node/node_api.h'));
const GLIBC = process.platform === 'linux' && !!(process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime;

test('the malloc addon is built and loads where Node headers and glibc exist', { skip: !(HEADERS && GLIBC) && 'no Node headers or not glibc' }, () => {
  const m = mallocAddon();
  assert.ok(m, 'dist/native/plinth-malloc.node did not load: make build compiles it');
  assert.ok(m.freeBytes() >= 0);
});

/**
 * In a child process: 3,000 Buffers of 32 KiB, each followed by a small Buffer that stays alive,
 * are freed. glibc keeps the 32 KiB holes (a live allocation sits above each); the trimmer, at a
 * 1 MiB threshold, must give them back to the OS.
 */
test('the trimmer returns freed Buffer memory that glibc kept in the RSS', { skip: !mallocAddon() && 'addon not built' }, () => {
  const mod = pathToFileURL(resolve(import.meta.dirname, 'malloc.js')).href;
  const script = `
    import { mallocAddon, startMallocTrimmer } from ${JSON.stringify(mod)};
    const m = mallocAddon();
    const rss = () => process.memoryUsage.rss();
    let big = [];
    const keep = [];
    for (let i = 0; i < 3000; i++) { big.push(Buffer.alloc(32 * 1024, 1)); keep.push(Buffer.alloc(64, 2)); }
    big = null;
    gc();
    await new Promise((r) => setTimeout(r, 200));
    const freeBefore = m.freeBytes();
    const rssBefore = rss();
    const trims = [];
    const t = startMallocTrimmer({ intervalMs: 50, thresholdBytes: 1024 * 1024, onTrim: (b, a) => trims.push([b, a]) });
    for (let i = 0; i < 40 && trims.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    t.stop();
    console.log(JSON.stringify({ freeBefore, rssBefore, rssAfter: rss(), freeAfter: m.freeBytes(), trims, kept: keep.length }));
  `;
  const out = JSON.parse(execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' })) as {
    freeBefore: number;
    rssBefore: number;
    rssAfter: number;
    trims: Array<[number, number]>;
  };
  const MiB = 2 ** 20;
  assert.ok(out.freeBefore >= 64 * MiB, `glibc should hold the freed 94 MiB, holds ${(out.freeBefore / MiB).toFixed(1)} MiB`);
  assert.equal(out.trims.length, 1, 'one trim while over the threshold');
  assert.ok(out.rssBefore - out.rssAfter >= 48 * MiB, `RSS ${(out.rssBefore / MiB).toFixed(0)} -> ${(out.rssAfter / MiB).toFixed(0)} MiB`);
});

/**
 * In a child process: 2,000,000 small objects are made, then dropped while nothing allocates (as
 * after start-up), leaving V8's heap grown; the start-up settle (two calls in a burst) runs one
 * compacting collection that gives the pages back.
 */
test('the start-up heap settle returns the heap V8 grew into, once per burst of calls', { skip: !mallocAddon() && 'addon not built' }, () => {
  const mod = pathToFileURL(resolve(import.meta.dirname, 'malloc.js')).href;
  const script = `
    import { settleHeapSoon } from ${JSON.stringify(mod)};
    let garbage = [];
    for (let i = 0; i < 2000000; i++) garbage.push({ i, s: 'x' + i });
    const settles = [];
    settleHeapSoon((i) => settles.push(i));
    settleHeapSoon((i) => settles.push(i));
    // Dropped before the settle runs (a second after the last call), with nothing allocating since.
    await new Promise((r) => setTimeout(r, 300));
    // Read here, so that V8 cannot find the list dead any earlier.
    const made = garbage.length;
    garbage = null;
    await new Promise((r) => setTimeout(r, 2500));
    console.log(JSON.stringify({ made, settles }));
  `;
  const { made, settles } = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as { made: number; settles: Array<{ heapBefore: number; heapAfter: number; compacting: boolean }> };
  assert.equal(made, 2_000_000);
  assert.equal(settles.length, 1, 'one collection for the burst');
  const MiB = 2 ** 20;
  assert.equal(settles[0]!.compacting, true);
  assert.ok(settles[0]!.heapBefore - settles[0]!.heapAfter >= 64 * MiB, `heap ${(settles[0]!.heapBefore / MiB).toFixed(0)} -> ${(settles[0]!.heapAfter / MiB).toFixed(0)} MiB`);
});
