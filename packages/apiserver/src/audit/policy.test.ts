import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compilePolicy, loadPolicyFile, parsePolicy, type PolicyAttributes } from './policy.js';

const base: PolicyAttributes = {
  user: { name: 'alice', groups: ['devs', 'system:authenticated'] },
  verb: 'get',
  isResourceRequest: true,
  path: '/api/v1/namespaces/default/pods/p',
  apiGroup: '',
  namespace: 'default',
  resource: 'pods',
  subresource: '',
  name: 'p',
};

function policyOf(yaml: string) {
  return compilePolicy(parsePolicy(yaml));
}

const head = 'apiVersion: audit.k8s.io/v1\nkind: Policy\n';

test('first matching rule wins; no match is None', () => {
  const p = policyOf(`${head}rules:
- level: None
  users: [bob]
- level: Metadata
  userGroups: [devs]
- level: RequestResponse
`);
  assert.equal(p.evaluate(base).level, 'Metadata');
  assert.equal(p.evaluate({ ...base, user: { name: 'bob', groups: ['devs'] } }).level, 'None');
  assert.equal(p.evaluate({ ...base, user: { name: 'carol', groups: [] } }).level, 'RequestResponse');
  const none = policyOf(`${head}rules:\n- level: Request\n  verbs: [create]\n`);
  assert.equal(none.evaluate(base).level, 'None');
  assert.equal(none.evaluate({ ...base, verb: 'create' }).level, 'Request');
});

test('resources: group, subresources, */status and pods/* wildcards, resourceNames; namespaces', () => {
  const p = policyOf(`${head}rules:
- level: Request
  resources: [{group: "", resources: ["pods/log"]}]
- level: RequestResponse
  resources: [{group: "apps", resources: ["*/status"]}]
- level: Metadata
  resources: [{group: "", resources: ["configmaps"], resourceNames: ["cfg"]}]
- level: None
  resources: [{group: "", resources: ["secrets/*"]}]
- level: Metadata
  namespaces: ["kube-system", ""]
`);
  assert.equal(p.evaluate({ ...base, subresource: 'log' }).level, 'Request');
  assert.equal(p.evaluate(base).level, 'None');
  assert.equal(p.evaluate({ ...base, apiGroup: 'apps', resource: 'deployments', subresource: 'status' }).level, 'RequestResponse');
  assert.equal(p.evaluate({ ...base, apiGroup: 'apps', resource: 'deployments' }).level, 'None');
  assert.equal(p.evaluate({ ...base, resource: 'configmaps', name: 'cfg' }).level, 'Metadata');
  assert.equal(p.evaluate({ ...base, resource: 'configmaps', name: 'other' }).level, 'None');
  // kube's checker matches `secrets/*` against the resource itself too, not only its sub-resources.
  assert.equal(p.evaluate({ ...base, resource: 'secrets', namespace: 'kube-system' }).level, 'None');
  assert.equal(p.evaluate({ ...base, resource: 'secrets', subresource: 'x', namespace: 'kube-system' }).level, 'None');
  assert.equal(p.evaluate({ ...base, resource: 'services', namespace: 'kube-system' }).level, 'Metadata');
  assert.equal(p.evaluate({ ...base, resource: 'namespaces', namespace: '', name: 'x' }).level, 'Metadata');
  // Resource rules never match non-resource requests.
  assert.equal(p.evaluate({ ...base, isResourceRequest: false, namespace: '', path: '/healthz' }).level, 'None');
});

test('nonResourceURLs: exact, trailing * prefix, *', () => {
  const p = policyOf(`${head}rules:
- level: Request
  nonResourceURLs: ["/healthz*", "/version"]
- level: Metadata
  nonResourceURLs: ["*"]
`);
  const nr = { ...base, isResourceRequest: false, resource: '', namespace: '', name: '' };
  assert.equal(p.evaluate({ ...nr, path: '/healthz/etcd' }).level, 'Request');
  assert.equal(p.evaluate({ ...nr, path: '/version' }).level, 'Request');
  assert.equal(p.evaluate({ ...nr, path: '/versions' }).level, 'Metadata');
  assert.equal(p.evaluate(base).level, 'None');
});

test('omitStages are the union of the policy and the rule; omitManagedFields: the rule overrides the policy', () => {
  const p = policyOf(`${head}omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: Metadata
  verbs: [get]
  omitStages: [ResponseStarted]
  omitManagedFields: false
- level: Metadata
`);
  const c = p.evaluate(base);
  assert.deepEqual([...c.omitStages].sort(), ['RequestReceived', 'ResponseStarted']);
  assert.equal(c.omitManagedFields, false);
  const d = p.evaluate({ ...base, verb: 'list' });
  assert.deepEqual([...d.omitStages], ['RequestReceived']);
  assert.equal(d.omitManagedFields, true);
  // Evaluation hands out the compiled config: nothing new per request.
  assert.equal(p.evaluate(base), c);
});

test('JSON policies parse too', () => {
  const p = policyOf(JSON.stringify({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'Metadata' }] }));
  assert.equal(p.evaluate(base).level, 'Metadata');
});

test("invalid policies are refused with kube's messages", () => {
  const bad = (yaml: string) => assert.throws(() => parsePolicy(yaml), Error);
  assert.throws(() => parsePolicy('apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: Metadata}]\n'), {
    message: 'failed decoding: no kind "Policy" is registered for version "audit.k8s.io/v1beta1" in scheme "pkg/runtime/scheme.go:100"',
  });
  assert.throws(() => parsePolicy(`${head}rules:\n- level: Everything\n`), {
    message: 'rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"',
  });
  assert.throws(() => parsePolicy(`${head}rules:\n- {}\n`), { message: 'rules[0].level: Required value' });
  assert.throws(() => parsePolicy(`${head}rules:\n- level: None\n  omitStages: [Sometime]\n- level: None\n  nonResourceURLs: ["healthz"]\n`), {
    message: '[rules[0].omitStages[0]: Invalid value: "Sometime": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic, rules[1].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a \'/\' character]',
  });
  assert.throws(() => parsePolicy(`${head}rules:\n- level: None\n  nonResourceURLs: ["/a*b"]\n`), /non-resource URL wildcards '\*' must be the final character of the rule/);
  assert.throws(() => parsePolicy(`${head}rules:\n- level: None\n  nonResourceURLs: ["/a"]\n  namespaces: [x]\n`), /rules cannot apply to both regular resources and non-resource URLs/);
  assert.throws(() => parsePolicy(`${head}rules:\n- level: None\n  resources: [{resourceNames: [x]}]\n`), /using resourceNames requires at least one resource/);
  assert.throws(() => parsePolicy(`${head}rules:\n- level: None\n  resources: [{group: "apps/v1"}]\n`), /rules\[0\]\.resources\.group: Invalid value: "apps\/v1"/);
  assert.throws(() => parsePolicy(`${head}rules: []\n`), { message: 'loaded illegal policy with 0 rules' });
  assert.throws(() => parsePolicy('rules: []\n'), /Object 'Kind' is missing/);
  bad('- not\n- an object\n');
});

test('loadPolicyFile names the file in its errors', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-policy-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'policy.yaml');
  writeFileSync(file, `${head}rules:\n- level: Loud\n`);
  assert.throws(() => loadPolicyFile(file), { message: `loading audit policy file: rules[0].level: Unsupported value: "Loud": supported values: "None", "Metadata", "Request", "RequestResponse": from file ${file}` });
  assert.throws(() => loadPolicyFile(join(dir, 'missing.yaml')), /^Error: loading audit policy file: failed to read file path ".*missing.yaml": ENOENT/);
});
