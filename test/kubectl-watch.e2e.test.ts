/**
 * End-to-end with the real kubectl against the real executable: `kubectl get -w` (a list, then a
 * watch from its resourceVersion, both as server-side Tables), `--output-watch-events`, chunked
 * lists (`--chunk-size`, `limit`/`continue`), all-namespaces lists and cluster-scoped lists.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { kubectlPath, startProcess, tempDir, eventually, type PlinthProcess } from './harness.js';

let dataDir: string;
let plinth: PlinthProcess;
const watchers = new Set<ChildProcess>();

function kubectl(args: string[], input?: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(kubectlPath(), ['--kubeconfig', plinth.kubeconfig, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    ...(input === undefined ? {} : { input }),
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function serverLog(): string {
  return `\n--- server log ---\n${plinth.output().slice(-2000)}`;
}

function ok(...args: string[]): string {
  const r = kubectl(args);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}${serverLog()}`);
  return r.stdout;
}

/**
 * Changes an object's labels with a read-modify-write (`kubectl replace`, an HTTP PUT).
 * `--validate=false`: client-side schema validation needs /openapi/v2 or /openapi/v3, which is not
 * what these tests are about.
 */
function relabelByReplace(ns: string, name: string, labels: Record<string, string>): void {
  const obj = JSON.parse(ok('-n', ns, 'get', 'sa', name, '-o', 'json'));
  obj.metadata.labels = { ...obj.metadata.labels, ...labels };
  const r = kubectl(['replace', '--validate=false', '-f', '-'], JSON.stringify(obj));
  assert.equal(r.code, 0, `kubectl replace failed:\n${r.stderr}${serverLog()}`);
}

interface Watching {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Waits until `pattern` matches the output at least `count` times. */
  waitFor(pattern: RegExp, count: number, what: string): Promise<void>;
  stop(): Promise<void>;
}

/** Runs a long-lived kubectl (a watch) in the background, collecting its output. */
function kubectlInBackground(...args: string[]): Watching {
  const child = spawn(kubectlPath(), ['--kubeconfig', plinth.kubeconfig, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  watchers.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const count = (pattern: RegExp): number => [...out.matchAll(new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`))].length;
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    async waitFor(pattern, n, what) {
      try {
        await eventually(async () => count(pattern) >= n, 15_000, what);
      } catch (e) {
        assert.fail(
          `${(e as Error).message} (${pattern} x${n}; kubectl ${child.exitCode === null ? 'running' : `exited ${child.exitCode}`})\n--- kubectl stdout ---\n${out}\n--- kubectl stderr ---\n${err}${serverLog()}`,
        );
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      watchers.delete(child);
    },
  };
}

const rows = (out: string, name: string): number => out.split('\n').filter((l) => new RegExp(`^${name}\\s`).test(l)).length;

async function namespaceWithDefaultSA(ns: string): Promise<void> {
  ok('create', 'namespace', ns);
  // The service account controller creates `default` in every new namespace.
  await eventually(async () => kubectl(['-n', ns, 'get', 'sa', 'default']).code === 0, 15_000, `default service account in ${ns}`);
}

before(async () => {
  dataDir = tempDir('plinth-kwatch-');
  plinth = await startProcess(dataDir);
});

after(async () => {
  for (const w of watchers) w.kill('SIGKILL');
  await plinth?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('kubectl get -w prints a row for every create, update and delete', async () => {
  await namespaceWithDefaultSA('kw');
  const w = kubectlInBackground('-n', 'kw', 'get', 'sa', '-w');
  try {
    // The initial list, as a table with a header.
    await w.waitFor(/^default\s/m, 1, 'the initial list');
    assert.match(w.stdout(), /^NAME\s/m);

    ok('-n', 'kw', 'create', 'sa', 'watched');
    await w.waitFor(/^watched\s/m, 1, 'the created service account');

    relabelByReplace('kw', 'watched', { tier: 'gold' });
    await w.waitFor(/^watched\s/m, 2, 'the updated service account');

    ok('-n', 'kw', 'delete', 'sa', 'watched');
    await w.waitFor(/^watched\s/m, 3, 'the deleted service account');

    // Another object after the delete: the watch is still going.
    ok('-n', 'kw', 'create', 'sa', 'later');
    await w.waitFor(/^later\s/m, 1, 'a service account created after the delete');
    assert.equal(w.child.exitCode, null, `kubectl exited:\n${w.stderr()}`);

    // Exactly one row per event; `default` only from the initial list; one header.
    const out = w.stdout();
    assert.equal(rows(out, 'watched'), 3, out);
    assert.equal(rows(out, 'default'), 1, out);
    assert.equal(rows(out, 'later'), 1, out);
    assert.equal(out.split('\n').filter((l) => /^NAME\s/.test(l)).length, 1, out);
    assert.equal(w.stderr().trim(), '', 'kubectl reported no errors');
  } finally {
    await w.stop();
  }
});

test('kubectl get -w --output-watch-events shows ADDED, MODIFIED and DELETED', async () => {
  await namespaceWithDefaultSA('kwe');
  const w = kubectlInBackground('-n', 'kwe', 'get', 'sa', '-w', '--output-watch-events');
  try {
    await w.waitFor(/^ADDED\s+default\s/m, 1, 'the initial list as ADDED');
    assert.match(w.stdout(), /^EVENT\s+NAME\s/m);

    ok('-n', 'kwe', 'create', 'sa', 'ev');
    await w.waitFor(/^ADDED\s+ev\s/m, 1, 'ADDED');
    relabelByReplace('kwe', 'ev', { tier: 'silver' });
    await w.waitFor(/^MODIFIED\s+ev\s/m, 1, 'MODIFIED');
    ok('-n', 'kwe', 'delete', 'sa', 'ev');
    await w.waitFor(/^DELETED\s+ev\s/m, 1, 'DELETED');

    const events = w
      .stdout()
      .split('\n')
      .filter((l) => /^\w+\s+ev\s/.test(l))
      .map((l) => l.split(/\s+/)[0]);
    assert.deepEqual(events, ['ADDED', 'MODIFIED', 'DELETED']);
    assert.equal(w.child.exitCode, null);
  } finally {
    await w.stop();
  }
});

test('kubectl label and annotate (PATCH) show up as MODIFIED in a watch', async () => {
  await namespaceWithDefaultSA('kwp');
  ok('-n', 'kwp', 'create', 'sa', 'patched');
  const w = kubectlInBackground('-n', 'kwp', 'get', 'sa', '-w', '--output-watch-events');
  try {
    await w.waitFor(/^ADDED\s+patched\s/m, 1, 'the initial list');
    assert.match(ok('-n', 'kwp', 'label', 'sa', 'patched', 'tier=bronze'), /serviceaccount\/patched labeled/);
    await w.waitFor(/^MODIFIED\s+patched\s/m, 1, 'MODIFIED after kubectl label');
    assert.match(ok('-n', 'kwp', 'annotate', 'sa', 'patched', 'note=hi'), /serviceaccount\/patched annotated/);
    await w.waitFor(/^MODIFIED\s+patched\s/m, 2, 'MODIFIED after kubectl annotate');
    const sa = JSON.parse(ok('-n', 'kwp', 'get', 'sa', 'patched', '-o', 'json'));
    assert.equal(sa.metadata.labels?.tier, 'bronze');
    assert.equal(sa.metadata.annotations?.note, 'hi');
  } finally {
    await w.stop();
  }
});

test('kubectl get --chunk-size=2 follows continue tokens through all pages', async () => {
  await namespaceWithDefaultSA('chunks');
  const names = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7'];
  for (const n of names) ok('-n', 'chunks', 'create', 'sa', n);

  const r = kubectl(['-n', 'chunks', 'get', 'sa', '--chunk-size=2', '-v=6']);
  assert.equal(r.code, 0, `${r.stderr}${serverLog()}`);
  const lines = r.stdout.split('\n').filter((l) => l.trim() !== '');
  assert.equal(lines.filter((l) => /^NAME\s/.test(l)).length, 1, `one header:\n${r.stdout}`);
  const listed = lines.filter((l) => !/^NAME\s/.test(l)).map((l) => l.split(/\s+/)[0]);
  assert.deepEqual(listed, [...names, 'default'], r.stdout);

  // The request log (kubectl -v=6): the first page with limit=2, then pages with continue= tokens.
  const gets = [...r.stderr.matchAll(/verb="GET" url="([^"]+)" status="(\d+)/g)]
    .map((m) => ({ url: new URL(m[1]!), status: m[2] }))
    .filter((g) => g.url.pathname === '/api/v1/namespaces/chunks/serviceaccounts');
  assert.ok(gets.length > 1, `more than one list request:\n${r.stderr}`);
  for (const g of gets) {
    assert.equal(g.status, '200');
    assert.equal(g.url.searchParams.get('limit'), '2', g.url.href);
  }
  assert.equal(gets[0]!.url.searchParams.get('continue'), null);
  const tokens = gets.slice(1).map((g) => g.url.searchParams.get('continue'));
  assert.ok(tokens.every((t) => t), `every later page carries a continue token: ${gets.map((g) => g.url.search).join(' ')}`);
  assert.equal(new Set(tokens).size, tokens.length, 'each page has its own token');
  // 8 items in pages of 2: 4 requests (the last page says there is no more).
  assert.equal(gets.length, 4, gets.map((g) => g.url.search).join('\n'));

  // The same through -o name (lists without the server-side table).
  const byName = kubectl(['-n', 'chunks', 'get', 'sa', '--chunk-size=3', '-o', 'name']);
  assert.equal(byName.code, 0, byName.stderr);
  assert.deepEqual(byName.stdout.trim().split('\n'), [...names, 'default'].map((n) => `serviceaccount/${n}`));
});

test('kubectl get sa -A and kubectl get clusterrolebindings', async () => {
  await namespaceWithDefaultSA('all-a');
  await namespaceWithDefaultSA('all-b');
  ok('-n', 'all-a', 'create', 'sa', 'robot-a');
  ok('-n', 'all-b', 'create', 'sa', 'robot-b');

  const all = ok('get', 'sa', '-A');
  assert.match(all, /^NAMESPACE\s+NAME\s/m);
  for (const [ns, name] of [
    ['all-a', 'robot-a'],
    ['all-b', 'robot-b'],
    ['all-a', 'default'],
    ['all-b', 'default'],
    ['default', 'default'],
  ]) {
    assert.match(all, new RegExp(`^${ns}\\s+${name}\\s`, 'm'), all);
  }
  const chunked = ok('get', 'sa', '--all-namespaces', '--chunk-size=1', '-o', 'name');
  assert.ok(chunked.includes('serviceaccount/robot-a') && chunked.includes('serviceaccount/robot-b'), chunked);

  ok('create', 'clusterrolebinding', 'kw-view', '--clusterrole=view', '--user=alice');
  ok('create', 'clusterrolebinding', 'kw-edit', '--clusterrole=edit', '--serviceaccount=all-a:robot-a');
  const crbs = ok('get', 'clusterrolebindings');
  assert.match(crbs, /^NAME\s/m);
  assert.match(crbs, /^kw-view\s/m, crbs);
  assert.match(crbs, /^kw-edit\s/m, crbs);
  const wide = ok('get', 'clusterrolebinding', 'kw-edit', '-o', 'jsonpath={.roleRef.name} {.subjects[0].kind} {.subjects[0].namespace}/{.subjects[0].name}');
  assert.equal(wide, 'edit ServiceAccount all-a/robot-a');
  ok('delete', 'clusterrolebinding', 'kw-view', 'kw-edit');
  const remaining = ok('get', 'clusterrolebindings');
  assert.doesNotMatch(remaining, /^kw-(view|edit)\s/m);
});
