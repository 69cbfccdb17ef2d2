/**
 * Issue 23, point 3: one request must never freeze every client. All work runs on one event loop,
 * so each attack here is sent at the size that froze plinth, while another client keeps a
 * `/readyz` probe in flight: the attack is answered as kube answers it, and no probe waits 2 s.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestClient, tempDir, usePlinth, eventually } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const NOBODY_TOKEN = 'nobody-token-0123456789';
const tokens = tempDir('plinth-responsiveness-');
writeFileSync(join(tokens, 'tokens.csv'), `${NOBODY_TOKEN},nobody,nobody-uid\n`);
const env = usePlinth([`--token-auth-file=${join(tokens, 'tokens.csv')}`]);

/** The bound for other clients, generous against the seconds the attacks used to take. */
const PROBE_BOUND_MS = 2000;

/**
 * Runs `attack` while a second client keeps a GET /readyz in flight (a new one as soon as one is
 * answered, so a blocked event loop always holds one); returns the attack's result, the longest
 * probe and the probes not answered 200 (a blocked server fails its own readiness checks).
 */
async function whileProbing<T>(attack: () => Promise<T>): Promise<{ result: T; probeMaxMs: number; probeFailures: string[] }> {
  // Its own connection: a second client of the same server.
  const probe = TestClient.fromKubeconfig(env.plinth.server.kubeconfigPath);
  let done = false;
  let probeMaxMs = 0;
  let probes = 0;
  const probeFailures: string[] = [];
  const loop = (async () => {
    while (!done || probes === 0) {
      const t0 = performance.now();
      try {
        const r = await probe.get('/readyz');
        if (r.status !== 200) probeFailures.push(`${r.status} ${r.raw.toString().slice(0, 200)}`);
      } catch (e) {
        probeFailures.push(String(e));
      }
      probeMaxMs = Math.max(probeMaxMs, performance.now() - t0);
      probes++;
    }
  })();
  try {
    const result = await attack();
    done = true;
    await loop;
    return { result, probeMaxMs, probeFailures };
  } finally {
    done = true;
    await loop;
    probe.close();
  }
}

function assertResponsive(p: { probeMaxMs: number; probeFailures: string[] }, what: string): void {
  assert.ok(p.probeMaxMs < PROBE_BOUND_MS, `${what}: another client's /readyz waited ${Math.round(p.probeMaxMs)} ms`);
  assert.deepEqual(p.probeFailures, [], `${what}: /readyz failed meanwhile`);
}

describe('YAML: a flow map of 40,000 keys (the duplicate-key check was quadratic)', () => {
  it('a 430 KB SelfSubjectAccessReview from a user with no binding is answered, others are served', async () => {
    const keys = Array.from({ length: 40_000 }, (_, i) => `key${String(i).padStart(5, '0')}: v`).join(', ');
    const body = `apiVersion: authorization.k8s.io/v1\nkind: SelfSubjectAccessReview\nspec: {resourceAttributes: {verb: get, resource: secrets, namespace: team}, ${keys}}\n`;
    assert.ok(body.length > 400_000);
    const probed = await whileProbing(() =>
      env.plinth.client.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { rawBody: body, token: NOBODY_TOKEN, headers: { 'content-type': 'application/yaml' } }),
    );
    expectCode(probed.result, 201);
    assert.equal(probed.result.body.status.allowed, false);
    assertResponsive(probed, 'YAML flow map');
  });

  it('a 3 MB one (265,000 keys, near the body limit) is parsed off the event loop: others are served', async () => {
    const keys = Array.from({ length: 265_000 }, (_, i) => `k${i}: v`).join(', ');
    const body = `apiVersion: authorization.k8s.io/v1\nkind: SelfSubjectAccessReview\nspec: {resourceAttributes: {verb: list, resource: pods}, ${keys}}\n`;
    assert.ok(body.length > 3_000_000 && body.length < 3 * 1024 * 1024);
    const probed = await whileProbing(() =>
      env.plinth.client.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { rawBody: body, token: NOBODY_TOKEN, headers: { 'content-type': 'application/yaml' } }),
    );
    expectCode(probed.result, 201);
    assertResponsive(probed, 'a 3 MB YAML body');
  });

  it('a duplicate key keeps its last value, as kube decodes YAML (it was a 400)', async () => {
    const body = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup-keys\ndata:\n  a: first\n  b: x\n  a: last\n';
    const r = await env.plinth.client.request('POST', '/api/v1/namespaces/default/configmaps', { rawBody: body, headers: { 'content-type': 'application/yaml' } });
    expectCode(r, 201);
    assert.deepEqual(r.body.data, { a: 'last', b: 'x' });
  });
});

describe('server-side apply: a JSON body is not read by the YAML parser', () => {
  it('an apply of a ConfigMap with 40,000 keys (JSON) is answered, others are served', async () => {
    const data = Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`k${i}`, 'v']));
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big-apply' }, data });
    const probed = await whileProbing(() =>
      env.plinth.client.request('PATCH', '/api/v1/namespaces/default/configmaps/big-apply?fieldManager=attacker', { rawBody: body, headers: { 'content-type': 'application/apply-patch+yaml' } }),
    );
    expectCode(probed.result, 201);
    assert.equal(Object.keys(probed.result.body.data).length, 40_000);
    assertResponsive(probed, 'JSON apply body');
  });
});

describe('strategic merge patch: 12,000 secrets with $setElementOrder (list merges were quadratic)', () => {
  it('a 410 KB patch, then its reverse order, are answered with kube\'s order; others are served', async () => {
    const c = env.plinth.client;
    expectCode(await c.post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'many-secrets' } }), 201);
    const refs = Array.from({ length: 12_000 }, (_, i) => ({ name: `secret-${String(i).padStart(5, '0')}` }));
    const path = '/api/v1/namespaces/default/serviceaccounts/many-secrets';
    for (const order of [refs, refs.slice().reverse()]) {
      const body = JSON.stringify({ '$setElementOrder/secrets': order, secrets: order });
      assert.ok(body.length > 400_000);
      const probed = await whileProbing(() => c.request('PATCH', path, { rawBody: body, headers: { 'content-type': 'application/strategic-merge-patch+json' } }));
      expectCode(probed.result, 200);
      assert.deepEqual(probed.result.body.secrets, order);
      assertResponsive(probed, 'strategic merge patch');
    }
  });
});

describe("CRD patterns: Go's regexp (RE2), never a backtracking one", () => {
  const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const crd = (plural: string, kind: string, pattern: string): Record<string, unknown> => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.redos.example.com` },
    spec: {
      group: 'redos.example.com',
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { name: { type: 'string', pattern } } } } } } }],
    },
  });
  const served = async (plural: string): Promise<void> => {
    await eventually(async () => (await env.plinth.client.get(`/apis/redos.example.com/v1/namespaces/default/${plural}`)).status === 200, 15_000, `${plural} served`);
  };

  it("^([a-z0-9]+-?)+[a-z0-9]$ against a 30-character value is a 422 at once (11 s before, doubling per character)", async () => {
    const c = env.plinth.client;
    expectCode(await c.post(CRDS, crd('names', 'Name', '^([a-z0-9]+-?)+[a-z0-9]$')), 201);
    await served('names');
    const obj = (name: string): Record<string, unknown> => ({ apiVersion: 'redos.example.com/v1', kind: 'Name', metadata: { name: `n-${name.length}` }, spec: { name } });
    const bad = `${'a'.repeat(30)}!`;
    const probed = await whileProbing(() => c.post('/apis/redos.example.com/v1/namespaces/default/names', obj(bad)));
    expectStatus(probed.result, 422, 'Invalid', /spec\.name in body should match '\^\(\[a-z0-9\]\+-\?\)\+\[a-z0-9\]\$'/);
    assertResponsive(probed, 'CRD pattern');
    // 100,000 characters: linear.
    const probedLong = await whileProbing(() => c.post('/apis/redos.example.com/v1/namespaces/default/names', obj(`${'a'.repeat(100_000)}!`)));
    expectCode(probedLong.result, 422);
    assertResponsive(probedLong, 'CRD pattern, 100,000 characters');
    expectCode(await c.post('/apis/redos.example.com/v1/namespaces/default/names', obj('web-1')), 201);
  });

  it("Go syntax works ((?i), \\z, (?P<name>…)); what Go refuses is a 422 in Go's words", async () => {
    const c = env.plinth.client;
    expectCode(await c.post(CRDS, crd('tags', 'Tag', '(?i)^(?P<word>[a-z]+)\\z')), 201);
    await served('tags');
    const tag = (name: string, v: string): Record<string, unknown> => ({ apiVersion: 'redos.example.com/v1', kind: 'Tag', metadata: { name }, spec: { name: v } });
    expectCode(await c.post('/apis/redos.example.com/v1/namespaces/default/tags', tag('upper', 'ABC')), 201);
    expectCode(await c.post('/apis/redos.example.com/v1/namespaces/default/tags', tag('newline', 'abc\n')), 422);
    const refused = await c.post(CRDS, crd('refused', 'Refused', '^(?<n>x)$'));
    expectStatus(refused, 422, 'Invalid');
    assert.deepEqual(
      refused.body.details.causes.map((x: { field: string; message: string }) => `${x.field}: ${x.message}`),
      ['spec.validation.openAPIV3Schema.properties[spec].properties[name].pattern: Invalid value: "^(?<n>x)$": must be a valid regular expression, but isn\'t: error parsing regexp: invalid or unsupported Perl syntax: `(?<`'],
    );
  });
});
