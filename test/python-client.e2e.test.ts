/** The official Python client (Debian's python3-kubernetes) through the core flows, against the real executable. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, startProcess, tempDir, type PlinthProcess } from './harness.js';

let dataDir: string;
let plinth: PlinthProcess;

before(async () => {
  dataDir = tempDir('plinth-py-');
  plinth = await startProcess(dataDir);
});

after(async () => {
  await plinth?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('namespaces, service accounts (create, replace, stale replace, patch, watch, delete) and cluster role bindings', () => {
  // Debian's package is importable only from the system python, not a pyenv one on PATH.
  const r = spawnSync('/usr/bin/python3', [join(REPO_ROOT, 'test/python/client_flows.py'), plinth.kubeconfig], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}\n--- server log ---\n${plinth.output().slice(-2000)}`);
  assert.match(r.stdout, /^ok$/m);
});
