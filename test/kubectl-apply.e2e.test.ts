/**
 * End-to-end: the real kubectl's write verbs built on PATCH against the real executable —
 * client-side `kubectl apply` (last-applied-configuration + strategic merge patch), `kubectl diff`
 * (server dry-run), server-side apply with field managers and conflicts, `kubectl label/annotate/patch`,
 * and the Table columns `kubectl get` prints for the applied objects.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlPath, startProcess, tempDir, eventually, type PlinthProcess } from './harness.js';

let dataDir: string;
let cacheDir: string;
let plinth: PlinthProcess;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function kubectl(...args: string[]): Run {
  // A private discovery/OpenAPI cache: kubectl caches by host:port and revalidates by ETag.
  const r = spawnSync(kubectlPath(), ['--kubeconfig', plinth.kubeconfig, '--cache-dir', cacheDir, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function explain(args: string[], r: Run): string {
  return `kubectl ${args.join(' ')} exited ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}\n--- server log ---\n${plinth.output().slice(-2000)}`;
}

function ok(...args: string[]): string {
  const r = kubectl(...args);
  assert.equal(r.code, 0, explain(args, r));
  return r.stdout;
}

function manifest(name: string, text: string): string {
  const file = join(dataDir, name);
  writeFileSync(file, text);
  return file;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed kubectl JSON
type Obj = any;

function getSA(name: string, managed = false): Obj {
  return JSON.parse(ok('-n', 'default', 'get', 'sa', name, '-o', 'json', ...(managed ? ['--show-managed-fields'] : [])));
}

function getCRB(name: string): Obj {
  return JSON.parse(ok('get', 'clusterrolebinding', name, '-o', 'json'));
}

/** The managedFields entry of `manager` with `operation`, if any. */
function entry(obj: Obj, manager: string, operation = 'Apply'): Obj | undefined {
  return (obj.metadata.managedFields ?? []).find((e: Obj) => e.manager === manager && e.operation === operation);
}

/** Whether the manager's entry owns the field at the fieldsV1 path (e.g. ['f:metadata', 'f:labels', 'f:team']). */
function owns(obj: Obj, manager: string, path: string[]): boolean {
  let node = entry(obj, manager)?.fieldsV1;
  for (const p of path) {
    if (!node || typeof node !== 'object' || !(p in node)) return false;
    node = node[p];
  }
  return true;
}

function managersOf(obj: Obj): string {
  return JSON.stringify(obj.metadata.managedFields ?? [], null, 1);
}

before(async () => {
  dataDir = tempDir('plinth-apply-e2e-');
  cacheDir = tempDir('plinth-kubectl-cache-');
  plinth = await startProcess(dataDir);
});

after(async () => {
  await plinth?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// 1. Client-side apply

const V1 = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: apply-robot
  namespace: default
  labels:
    app: robot
    tier: backend
    stale: "yes"
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: apply-robot-view
  labels:
    app: robot
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: view
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: alice
- kind: ServiceAccount
  name: apply-robot
  namespace: default
`;

// tier changed, stale removed, a Group subject added.
const V2 = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: apply-robot
  namespace: default
  labels:
    app: robot
    tier: frontend
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: apply-robot-view
  labels:
    app: robot
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: view
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: alice
- kind: ServiceAccount
  name: apply-robot
  namespace: default
- apiGroup: rbac.authorization.k8s.io
  kind: Group
  name: auditors
`;

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

test('kubectl apply (client-side, validated) creates, then configures, then leaves unchanged', () => {
  const file = manifest('robot.yaml', V1);
  const created = ok('apply', '-f', file);
  assert.match(created, /^serviceaccount\/apply-robot created$/m);
  assert.match(created, /^clusterrolebinding\.rbac\.authorization\.k8s\.io\/apply-robot-view created$/m);

  const sa = getSA('apply-robot');
  assert.deepEqual(sa.metadata.labels, { app: 'robot', tier: 'backend', stale: 'yes' });
  const saLast = JSON.parse(sa.metadata.annotations?.[LAST_APPLIED] ?? 'null');
  assert.ok(saLast, `the ServiceAccount carries ${LAST_APPLIED}: ${JSON.stringify(sa.metadata)}`);
  assert.equal(saLast.kind, 'ServiceAccount');
  assert.equal(saLast.metadata.name, 'apply-robot');
  assert.deepEqual(saLast.metadata.labels, { app: 'robot', tier: 'backend', stale: 'yes' });

  const crb = getCRB('apply-robot-view');
  assert.deepEqual(crb.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' });
  assert.deepEqual(crb.subjects, [
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' },
    { kind: 'ServiceAccount', name: 'apply-robot', namespace: 'default' },
  ]);
  const crbLast = JSON.parse(crb.metadata.annotations?.[LAST_APPLIED] ?? 'null');
  assert.ok(crbLast, `the ClusterRoleBinding carries ${LAST_APPLIED}`);
  assert.equal(crbLast.subjects.length, 2);

  // Second apply of the edited file: both are patched.
  writeFileSync(file, V2);
  const configured = ok('apply', '-f', file);
  assert.match(configured, /^serviceaccount\/apply-robot configured$/m);
  assert.match(configured, /^clusterrolebinding\.rbac\.authorization\.k8s\.io\/apply-robot-view configured$/m);
  const sa2 = getSA('apply-robot');
  assert.equal(sa2.metadata.uid, sa.metadata.uid);
  assert.deepEqual(sa2.metadata.labels, { app: 'robot', tier: 'frontend' }, 'tier changed and stale removed');
  assert.deepEqual(JSON.parse(sa2.metadata.annotations[LAST_APPLIED]).metadata.labels, { app: 'robot', tier: 'frontend' });
  const crb2 = getCRB('apply-robot-view');
  assert.deepEqual(crb2.subjects, [
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' },
    { kind: 'ServiceAccount', name: 'apply-robot', namespace: 'default' },
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'auditors' },
  ]);
  assert.equal(JSON.parse(crb2.metadata.annotations[LAST_APPLIED]).subjects.length, 3);

  // Third apply of the same file: nothing to do, and nothing is written.
  const unchanged = ok('apply', '-f', file);
  assert.match(unchanged, /^serviceaccount\/apply-robot unchanged$/m);
  assert.match(unchanged, /^clusterrolebinding\.rbac\.authorization\.k8s\.io\/apply-robot-view unchanged$/m);
  assert.equal(getSA('apply-robot').metadata.resourceVersion, sa2.metadata.resourceVersion);
  assert.equal(getCRB('apply-robot-view').metadata.resourceVersion, crb2.metadata.resourceVersion);

  // A label added by someone else is neither in the last-applied nor in the file: apply keeps it.
  ok('-n', 'default', 'label', 'sa', 'apply-robot', 'extra=1');
  assert.match(ok('apply', '-f', file), /^serviceaccount\/apply-robot unchanged$/m);
  assert.deepEqual(getSA('apply-robot').metadata.labels, { app: 'robot', tier: 'frontend', extra: '1' });
});

test('kubectl apply records the client-side manager in managedFields', () => {
  const sa = getSA('apply-robot', true);
  // kubectl's client-side apply uses the field manager "kubectl-client-side-apply".
  const csa = entry(sa, 'kubectl-client-side-apply', 'Update');
  assert.ok(csa, `an Update entry of kubectl-client-side-apply: ${managersOf(sa)}`);
  assert.ok(csa.fieldsV1['f:metadata']['f:labels']['f:tier'], managersOf(sa));
  assert.ok(csa.fieldsV1['f:metadata']['f:annotations'][`f:${LAST_APPLIED}`], managersOf(sa));
  // The hand-added label belongs to kubectl-label.
  assert.ok(entry(sa, 'kubectl-label', 'Update')?.fieldsV1['f:metadata']['f:labels']['f:extra'], managersOf(sa));
});

// ---------------------------------------------------------------------------------------------
// 2. kubectl diff

test('kubectl diff shows a pending change (exit 1) and nothing when there is none (exit 0); it changes nothing', () => {
  const file = manifest('diff.yaml', V2);
  const initial = getSA('apply-robot');

  const same = kubectl('diff', '-f', file);
  assert.equal(same.code, 0, explain(['diff', '-f', file], same));
  assert.equal(same.stdout, '');

  writeFileSync(file, V2.replace('tier: frontend', 'tier: middle'));
  const args = ['diff', '-f', file];
  const changed = kubectl(...args);
  assert.equal(changed.code, 1, explain(args, changed));
  assert.match(changed.stdout, /^--- /m);
  assert.match(changed.stdout, /^\+\+\+ /m);
  assert.match(changed.stdout, /^@@ /m);
  assert.match(changed.stdout, /^-\s+tier: frontend$/m);
  assert.match(changed.stdout, /^\+\s+tier: middle$/m);
  assert.match(changed.stdout, /v1\.ServiceAccount\.default\.apply-robot/);
  // Only the ServiceAccount differs; the binding's diff section is empty.
  assert.doesNotMatch(changed.stdout, /ClusterRoleBinding/);
  // Nothing but the label (no resourceVersion, generation or timestamp churn) is in the diff.
  const hunks = changed.stdout.split('\n').filter((l) => /^[-+]/.test(l) && !/^(---|\+\+\+) /.test(l));
  assert.deepEqual(
    hunks.map((l) => l.replace(/\s+/g, ' ')),
    ['- tier: frontend', '+ tier: middle'],
    changed.stdout,
  );

  const afterDiff = getSA('apply-robot');
  assert.equal(afterDiff.metadata.labels.tier, 'frontend', 'diff did not apply the change');
  assert.equal(afterDiff.metadata.resourceVersion, initial.metadata.resourceVersion, 'diff wrote nothing');
});

// ---------------------------------------------------------------------------------------------
// 3. Server-side apply

function saYaml(name: string, labels: Record<string, string>, annotations: Record<string, string> = {}): string {
  const block = (key: string, m: Record<string, string>): string =>
    Object.keys(m).length ? `  ${key}:\n${Object.entries(m).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}\n`).join('')}` : '';
  return `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ${name}\n  namespace: default\n${block('labels', labels)}${block('annotations', annotations)}`;
}

function ssa(manager: string, file: string, ...extra: string[]): Run {
  return kubectl('apply', '--server-side', `--field-manager=${manager}`, ...extra, '-f', file);
}

function ssaOk(manager: string, file: string, ...extra: string[]): string {
  const args = ['apply', '--server-side', `--field-manager=${manager}`, ...extra, '-f', file];
  const r = kubectl(...args);
  assert.equal(r.code, 0, explain(args, r));
  return r.stdout;
}

/** alice applies team=a + note=x; bob's apply of team=b conflicts. Returns bob's failed run. */
function aliceThenConflictingBob(name: string): Run {
  const a = manifest(`${name}-a.yaml`, saYaml(name, { team: 'a' }, { note: 'x' }));
  assert.match(ssaOk('alice', a), new RegExp(`^serviceaccount/${name} serverside-applied$`, 'm'));
  const sa = getSA(name, true);
  assert.deepEqual(sa.metadata.labels, { team: 'a' });
  assert.equal(sa.metadata.annotations?.note, 'x');
  const alice = entry(sa, 'alice');
  assert.ok(alice, `alice has an Apply entry: ${managersOf(sa)}`);
  assert.equal(alice.apiVersion, 'v1');
  assert.equal(alice.fieldsType, 'FieldsV1');
  assert.ok(owns(sa, 'alice', ['f:metadata', 'f:labels', 'f:team']), managersOf(sa));
  assert.ok(owns(sa, 'alice', ['f:metadata', 'f:annotations', 'f:note']), managersOf(sa));

  const b = manifest(`${name}-b.yaml`, saYaml(name, { team: 'b', reviewer: 'bob' }));
  const r = ssa('bob', b);
  assert.notEqual(r.code, 0, `bob's conflicting apply must fail:\n${r.stdout}`);
  assert.match(r.stderr, /Apply failed with 1 conflict: conflict with "alice": \.metadata\.labels\.team/, r.stderr);
  const still = getSA(name, true);
  assert.deepEqual(still.metadata.labels, { team: 'a' }, 'a conflicting apply changes nothing');
  assert.equal(still.metadata.resourceVersion, sa.metadata.resourceVersion);
  assert.equal(entry(still, 'bob'), undefined, managersOf(still));
  return r;
}

test('server-side apply: a conflicting field owned by another manager fails, then --force-conflicts overwrites it', () => {
  aliceThenConflictingBob('ssa-overwrite');
  const out = ssaOk('bob', join(dataDir, 'ssa-overwrite-b.yaml'), '--force-conflicts');
  assert.match(out, /^serviceaccount\/ssa-overwrite serverside-applied$/m);
  const sa = getSA('ssa-overwrite', true);
  assert.deepEqual(sa.metadata.labels, { team: 'b', reviewer: 'bob' });
  assert.ok(owns(sa, 'bob', ['f:metadata', 'f:labels', 'f:team']), `bob owns team: ${managersOf(sa)}`);
  assert.ok(owns(sa, 'bob', ['f:metadata', 'f:labels', 'f:reviewer']), managersOf(sa));
  assert.equal(owns(sa, 'alice', ['f:metadata', 'f:labels', 'f:team']), false, `alice lost team: ${managersOf(sa)}`);
  assert.ok(owns(sa, 'alice', ['f:metadata', 'f:annotations', 'f:note']), `alice keeps note: ${managersOf(sa)}`);
  assert.equal(sa.metadata.annotations?.note, 'x');
});

test('server-side apply: giving up a conflicting field leaves it to its owner', () => {
  aliceThenConflictingBob('ssa-giveup');
  const b = manifest('ssa-giveup-b2.yaml', saYaml('ssa-giveup', { reviewer: 'bob' }));
  ssaOk('bob', b);
  const sa = getSA('ssa-giveup', true);
  assert.deepEqual(sa.metadata.labels, { team: 'a', reviewer: 'bob' });
  assert.ok(owns(sa, 'alice', ['f:metadata', 'f:labels', 'f:team']), managersOf(sa));
  assert.ok(entry(sa, 'bob'), `bob has an Apply entry: ${managersOf(sa)}`);
  assert.ok(owns(sa, 'bob', ['f:metadata', 'f:labels', 'f:reviewer']), managersOf(sa));
  assert.equal(owns(sa, 'bob', ['f:metadata', 'f:labels', 'f:team']), false, managersOf(sa));
});

test('server-side apply: applying the live value shares ownership', () => {
  aliceThenConflictingBob('ssa-share');
  const b = manifest('ssa-share-b2.yaml', saYaml('ssa-share', { team: 'a', reviewer: 'bob' }));
  ssaOk('bob', b);
  const sa = getSA('ssa-share', true);
  assert.deepEqual(sa.metadata.labels, { team: 'a', reviewer: 'bob' });
  assert.ok(owns(sa, 'alice', ['f:metadata', 'f:labels', 'f:team']), managersOf(sa));
  assert.ok(owns(sa, 'bob', ['f:metadata', 'f:labels', 'f:team']), managersOf(sa));

  // Now neither can change it alone: alice's change conflicts with bob.
  const a2 = manifest('ssa-share-a2.yaml', saYaml('ssa-share', { team: 'c' }, { note: 'x' }));
  const r = ssa('alice', a2);
  assert.notEqual(r.code, 0, r.stdout);
  assert.match(r.stderr, /Apply failed with 1 conflict: conflict with "bob": \.metadata\.labels\.team/, r.stderr);
});

test('server-side apply: dropping a field from the applied config removes it, unless another manager still owns it', () => {
  // Sole owner: removed.
  const a = manifest('ssa-remove-a.yaml', saYaml('ssa-remove', { team: 'a' }, { note: 'x' }));
  ssaOk('alice', a);
  assert.equal(getSA('ssa-remove').metadata.annotations?.note, 'x');
  writeFileSync(a, saYaml('ssa-remove', { team: 'a' }));
  ssaOk('alice', a);
  const removed = getSA('ssa-remove', true);
  assert.equal(removed.metadata.annotations?.note, undefined, `note removed: ${JSON.stringify(removed.metadata)}`);
  assert.deepEqual(removed.metadata.labels, { team: 'a' });
  assert.equal(owns(removed, 'alice', ['f:metadata', 'f:annotations', 'f:note']), false, managersOf(removed));

  // Shared owner: kept.
  const a2 = manifest('ssa-keep-a.yaml', saYaml('ssa-keep', { team: 'a' }, { note: 'x' }));
  ssaOk('alice', a2);
  const b2 = manifest('ssa-keep-b.yaml', saYaml('ssa-keep', {}, { note: 'x' }));
  ssaOk('bob', b2); // same value: no conflict
  const shared = getSA('ssa-keep', true);
  assert.ok(owns(shared, 'alice', ['f:metadata', 'f:annotations', 'f:note']), managersOf(shared));
  assert.ok(owns(shared, 'bob', ['f:metadata', 'f:annotations', 'f:note']), managersOf(shared));
  writeFileSync(a2, saYaml('ssa-keep', { team: 'a' }));
  ssaOk('alice', a2);
  const kept = getSA('ssa-keep', true);
  assert.equal(kept.metadata.annotations?.note, 'x', `bob still owns note: ${JSON.stringify(kept.metadata)}`);
  assert.deepEqual(kept.metadata.labels, { team: 'a' });
  assert.equal(owns(kept, 'alice', ['f:metadata', 'f:annotations', 'f:note']), false, managersOf(kept));
  assert.ok(owns(kept, 'bob', ['f:metadata', 'f:annotations', 'f:note']), managersOf(kept));
});

test('server-side apply onto a client-side-applied object: the applier takes over fields it sets with --force-conflicts', () => {
  // apply-robot was created and configured by client-side apply (manager kubectl-client-side-apply, Update).
  const f = manifest('takeover.yaml', saYaml('apply-robot', { app: 'robot', tier: 'ssa' }));
  const r = ssa('carol', f);
  assert.notEqual(r.code, 0, `changing a field owned by an Update manager conflicts:\n${r.stdout}`);
  assert.match(r.stderr, /conflict with "kubectl-client-side-apply" using v1: \.metadata\.labels\.tier/, r.stderr);
  ssaOk('carol', f, '--force-conflicts');
  const sa = getSA('apply-robot', true);
  assert.equal(sa.metadata.labels.tier, 'ssa');
  assert.ok(owns(sa, 'carol', ['f:metadata', 'f:labels', 'f:tier']), managersOf(sa));
});

function crbYaml(name: string, app: string): string {
  return `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ${name}
  labels:
    app: ${app}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: view
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: alice
`;
}

test('kubectl apply --server-side (manager "kubectl") upgrades a client-side-applied object: kubectl takes over its fields', () => {
  const file = manifest('upgrade-same.yaml', crbYaml('upgrade-same', 'robot'));
  assert.match(ok('apply', '-f', file), /created/);
  const out = ok('apply', '--server-side', '-f', file);
  assert.match(out, /^clusterrolebinding\.rbac\.authorization\.k8s\.io\/upgrade-same serverside-applied$/m);
  const crb = JSON.parse(ok('get', 'clusterrolebinding', 'upgrade-same', '-o', 'json', '--show-managed-fields'));
  // kubectl rewrites managedFields (a JSON patch of /metadata/managedFields) so that the client-side
  // manager's fields now belong to the server-side "kubectl" manager.
  assert.equal(entry(crb, 'kubectl-client-side-apply', 'Update'), undefined, managersOf(crb));
  assert.ok(owns(crb, 'kubectl', ['f:metadata', 'f:labels', 'f:app']), managersOf(crb));
  assert.ok(owns(crb, 'kubectl', ['f:roleRef']), managersOf(crb));
  assert.ok(owns(crb, 'kubectl', ['f:subjects']), managersOf(crb));
  assert.ok(crb.metadata.annotations?.[LAST_APPLIED], 'the annotation stays');
});

test('kubectl apply --server-side (manager "kubectl") onto a client-side-applied object changes a field it last applied without a conflict', () => {
  // kube's lastAppliedManager: for manager "kubectl", conflicts on fields recorded in a
  // last-applied-configuration that still matches the live object are forced.
  const file = manifest('upgrade-changed.yaml', crbYaml('upgrade-changed', 'robot'));
  assert.match(ok('apply', '-f', file), /created/);
  writeFileSync(file, crbYaml('upgrade-changed', 'robot2'));
  const args = ['apply', '--server-side', '-f', file];
  const r = kubectl(...args);
  assert.equal(r.code, 0, explain(args, r));
  assert.match(r.stdout, /^clusterrolebinding\.rbac\.authorization\.k8s\.io\/upgrade-changed serverside-applied$/m);
  const crb = JSON.parse(ok('get', 'clusterrolebinding', 'upgrade-changed', '-o', 'json', '--show-managed-fields'));
  assert.equal(crb.metadata.labels.app, 'robot2');
  assert.equal(JSON.parse(crb.metadata.annotations[LAST_APPLIED]).metadata.labels.app, 'robot2', 'the last-applied annotation follows');
  assert.ok(owns(crb, 'kubectl', ['f:metadata', 'f:labels', 'f:app']), managersOf(crb));

  // Any other manager still conflicts with what kubectl now owns.
  const other = manifest('upgrade-changed-dave.yaml', crbYaml('upgrade-changed', 'robot3'));
  const d = ssa('dave', other);
  assert.notEqual(d.code, 0, d.stdout);
  assert.match(d.stderr, /Apply failed with 1 conflict: conflict with "kubectl": \.metadata\.labels\.app/, d.stderr);
});

// ---------------------------------------------------------------------------------------------
// 4. kubectl get columns

test('kubectl get sa,clusterrolebindings -A prints the kinds\' columns; -o wide adds the binding subjects', async () => {
  const out = await eventually(async () => {
    const o = ok('get', 'sa,clusterrolebindings', '-A');
    return /apply-robot-view/.test(o) && /serviceaccount\/apply-robot\s/.test(o) ? o : undefined;
  }, 10_000, 'both applied objects listed');
  const lines = out.split('\n');
  const headers = lines.filter((l) => /^\S*NAME/.test(l) || /^NAMESPACE/.test(l)).map((l) => l.trim().split(/\s+/).join(' '));
  assert.ok(headers.includes('NAMESPACE NAME SECRETS AGE'), `service account header in:\n${out}`);
  // kubectl drops the NAMESPACE column for a cluster-scoped kind even with -A.
  // kubectl keeps the NAMESPACE column (empty cells) for the cluster-scoped kind under -A.
  assert.ok(headers.includes('NAMESPACE NAME ROLE AGE'), `binding header in:\n${out}`);
  assert.equal(headers.length, 2, out);
  assert.match(out, /^default\s+serviceaccount\/apply-robot\s+0\s+\S+$/m);
  assert.match(out, /^\s+clusterrolebinding\.rbac\.authorization\.k8s\.io\/apply-robot-view\s+ClusterRole\/view\s+\S+$/m);

  const wide = ok('get', 'clusterrolebinding', 'apply-robot-view', '-o', 'wide');
  const [header, row] = wide.trim().split('\n');
  assert.deepEqual(header!.trim().split(/\s+/), ['NAME', 'ROLE', 'AGE', 'USERS', 'GROUPS', 'SERVICEACCOUNTS']);
  const cells = row!.trim().split(/\s+/);
  assert.equal(cells[0], 'apply-robot-view');
  assert.equal(cells[1], 'ClusterRole/view');
  assert.match(cells[2]!, /^\d+[smhd]/);
  assert.deepEqual(cells.slice(3), ['alice', 'auditors', 'default/apply-robot']);

  const saTable = ok('-n', 'default', 'get', 'sa', 'apply-robot');
  assert.deepEqual(saTable.trim().split('\n')[0]!.trim().split(/\s+/), ['NAME', 'SECRETS', 'AGE']);
  assert.match(saTable, /^apply-robot\s+0\s+\d+[smhd]/m);
});

// ---------------------------------------------------------------------------------------------
// 5. kubectl label / annotate / patch

test('kubectl label and annotate change the object (strategic merge patches)', () => {
  ok('-n', 'default', 'create', 'serviceaccount', 'patch-robot');
  assert.match(ok('-n', 'default', 'label', 'sa', 'patch-robot', 'color=blue', 'size=s'), /^serviceaccount\/patch-robot labeled$/m);
  assert.deepEqual(getSA('patch-robot').metadata.labels, { color: 'blue', size: 's' });

  // An existing key needs --overwrite (kubectl checks this itself).
  assert.notEqual(kubectl('-n', 'default', 'label', 'sa', 'patch-robot', 'color=red').code, 0);
  ok('-n', 'default', 'label', 'sa', 'patch-robot', 'color=red', '--overwrite');
  assert.deepEqual(getSA('patch-robot').metadata.labels, { color: 'red', size: 's' });

  assert.match(ok('-n', 'default', 'label', 'sa', 'patch-robot', 'size-'), /^serviceaccount\/patch-robot unlabeled$/m);
  assert.deepEqual(getSA('patch-robot').metadata.labels, { color: 'red' });

  assert.match(ok('-n', 'default', 'annotate', 'sa', 'patch-robot', 'note=hello world', 'owner=ops'), /^serviceaccount\/patch-robot annotated$/m);
  let sa = getSA('patch-robot');
  assert.equal(sa.metadata.annotations.note, 'hello world');
  assert.equal(sa.metadata.annotations.owner, 'ops');
  ok('-n', 'default', 'annotate', 'sa', 'patch-robot', 'owner-');
  sa = getSA('patch-robot');
  assert.equal(sa.metadata.annotations.owner, undefined);
  assert.equal(sa.metadata.annotations.note, 'hello world');

  // Label by selector, across several objects.
  ok('-n', 'default', 'create', 'serviceaccount', 'patch-robot-2');
  ok('-n', 'default', 'label', 'sa', 'patch-robot-2', 'color=red');
  const both = ok('-n', 'default', 'label', 'sa', '-l', 'color=red', 'fleet=yes');
  assert.match(both, /^serviceaccount\/patch-robot labeled$/m);
  assert.match(both, /^serviceaccount\/patch-robot-2 labeled$/m);
  assert.equal(getSA('patch-robot-2').metadata.labels.fleet, 'yes');
});

test('kubectl patch: json, merge and strategic; a failing JSON-patch test op is refused with the server\'s message', () => {
  const initial = getSA('patch-robot');
  assert.match(
    ok('-n', 'default', 'patch', 'sa', 'patch-robot', '--type=json', '-p', '[{"op":"add","path":"/metadata/labels/j","value":"1"}]'),
    /^serviceaccount\/patch-robot patched$/m,
  );
  assert.equal(getSA('patch-robot').metadata.labels.j, '1');

  assert.match(ok('-n', 'default', 'patch', 'sa', 'patch-robot', '--type=merge', '-p', '{"metadata":{"labels":{"m":"2","color":null}}}'), /^serviceaccount\/patch-robot patched$/m);
  let sa = getSA('patch-robot');
  assert.equal(sa.metadata.labels.m, '2');
  assert.equal(sa.metadata.labels.color, undefined);

  // Default type is strategic; secrets merge by name.
  ok('-n', 'default', 'patch', 'sa', 'patch-robot', '-p', '{"secrets":[{"name":"s1"}],"automountServiceAccountToken":false}');
  ok('-n', 'default', 'patch', 'sa', 'patch-robot', '-p', '{"secrets":[{"name":"s2"}]}');
  sa = getSA('patch-robot');
  assert.deepEqual(sa.secrets.map((s: Obj) => s.name).sort(), ['s1', 's2']);
  assert.equal(sa.automountServiceAccountToken, false);

  // A patch that changes nothing: kubectl reports "(no change)" because the object came back identical.
  const rv = getSA('patch-robot').metadata.resourceVersion;
  assert.match(ok('-n', 'default', 'patch', 'sa', 'patch-robot', '--type=merge', '-p', '{"metadata":{"labels":{"m":"2"}}}'), /^serviceaccount\/patch-robot patched \(no change\)$/m);
  assert.equal(getSA('patch-robot').metadata.resourceVersion, rv);

  // A failing `test` op: 422 Invalid, nothing written.
  const args = ['-n', 'default', 'patch', 'sa', 'patch-robot', '--type=json', '-p', '[{"op":"test","path":"/metadata/labels/j","value":"2"},{"op":"add","path":"/metadata/labels/k","value":"3"}]'];
  const r = kubectl(...args);
  assert.notEqual(r.code, 0, explain(args, r));
  assert.match(r.stderr, /The request is invalid/, explain(args, r));
  assert.match(r.stderr, /testing value \/metadata\/labels\/j failed: test failed/, explain(args, r));
  const afterTest = getSA('patch-robot');
  assert.equal(afterTest.metadata.labels.k, undefined);
  assert.equal(afterTest.metadata.resourceVersion, rv);

  // A malformed patch document is a client error too.
  const bad = kubectl('-n', 'default', 'patch', 'sa', 'patch-robot', '--type=json', '-p', '[{"op":"frobnicate","path":"/metadata"}]');
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /Unexpected kind: frobnicate/);
  // A merge patch that is not JSON.
  const notJson = kubectl('-n', 'default', 'patch', 'sa', 'patch-robot', '--type=merge', '-p', '{"metadata":');
  assert.notEqual(notJson.code, 0);
  assert.equal(getSA('patch-robot').metadata.resourceVersion, rv);
  assert.equal(initial.metadata.uid, afterTest.metadata.uid);
});
