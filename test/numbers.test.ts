/**
 * JSON numbers as kube-apiserver 1.24 decodes them (sigs.k8s.io/json: int64 when an integer
 * literal fits, float64 otherwise, an error beyond float64), against a real server and etcd:
 * custom resources through every write verb in JSON and YAML, read back exactly by GET, list,
 * watch, the watch cache (`resourceVersion=0`), Table and etcd itself; CR schema validation of
 * those numbers; and the built-in kinds' typed int32 fields.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { eventually, kubectlPath, startInProcess, startTestEtcd, tempDir, type InProcessPlinth, type Response, type TestClient, type TestEtcd } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

let etcd: TestEtcd;
let plinth: InProcessPlinth;
const client = (): TestClient => plinth.client;

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gauges.numbers.example.com' },
  spec: {
    group: 'numbers.example.com',
    scope: 'Namespaced',
    names: { plural: 'gauges', singular: 'gauge', kind: 'Gauge', listKind: 'GaugeList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        additionalPrinterColumns: [{ name: 'I', type: 'integer', jsonPath: '.spec.i' }],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  i: { type: 'integer' },
                  n: { type: 'number' },
                  i32: { type: 'integer', format: 'int32' },
                  i64: { type: 'integer', format: 'int64' },
                  max: { type: 'integer', maximum: 9007199254740992 },
                  min: { type: 'integer', minimum: 0 },
                  m: { type: 'integer', multipleOf: 3 },
                  free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  set: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'integer' } },
                },
              },
            },
          },
        },
      },
    ],
  },
};
/** The same CRD with an enum holding an int64 above 2^53 (its text: JSON.stringify cannot write it). */
const CRD_TEXT = JSON.stringify(CRD).replace('"m":{"type":"integer","multipleOf":3}', '"m":{"type":"integer","multipleOf":3},"e":{"type":"integer","enum":[1,9007199254740993]}');

const gauges = (name = ''): string => `/apis/numbers.example.com/v1/namespaces/default/gauges${name ? `/${name}` : ''}`;
/** A Gauge's JSON text with `spec` written as given (numbers JavaScript cannot hold). */
const gauge = (name: string, spec: string): string => `{"apiVersion":"numbers.example.com/v1","kind":"Gauge","metadata":{"name":"${name}"},"spec":${spec}}`;
const JSON_BODY = { 'content-type': 'application/json' };
const text = (res: Response): string => res.raw.toString('utf8');

function post(body: string, headers: Record<string, string> = JSON_BODY): Promise<Response> {
  return client().request('POST', gauges(), { rawBody: body, headers });
}

/** The stored value of a key, as etcd holds it. */
async function stored(key: string): Promise<string> {
  const raw = new Etcd3({ hosts: [etcd.endpoint] });
  try {
    return (await raw.get(key).string()) ?? '';
  } finally {
    raw.close();
  }
}

before(async () => {
  etcd = await startTestEtcd();
  plinth = await startInProcess({ etcd });
  expectCode(await client().request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { rawBody: CRD_TEXT, headers: JSON_BODY }), 201, 'CRD');
  await eventually(async () => (await client().get(gauges())).status === 200, 20_000, 'gauges served');
});

after(async () => {
  await plinth?.stop();
  await etcd?.stop();
  rmSync(kubectlDir, { recursive: true, force: true });
});

const kubectlDir = tempDir('plinth-numbers-kubectl-');
function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', plinth.server.kubeconfigPath, '--cache-dir', join(kubectlDir, 'cache'), ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('numbers beyond float64 (kube: json: cannot unmarshal number ... into Go value of type float64)', () => {
  for (const [what, spec, literal] of [
    ['1e999 in an integer field', '{"i":1e999}', '1e999'],
    ['-1e999 under a maximum', '{"max":-1e999}', '-1e999'],
    ['1e400 in a number field', '{"n":1e400}', '1e400'],
    ['a 400-digit integer', `{"n":${'9'.repeat(400)}}`, '9'.repeat(400)],
    ['-1e999 under preserve-unknown-fields', '{"free":{"a":[1,-1e999]}}', '-1e999'],
  ] as const) {
    it(`${what}: 400 and nothing stored`, async () => {
      const name = `over-${what.replace(/[^a-z0-9]+/g, '-').replace(/-+$/, '')}`.slice(0, 60);
      const res = await post(gauge(name, spec));
      expectStatus(res, 400, 'BadRequest', `Gauge in version "v1" cannot be handled as a Gauge: json: cannot unmarshal number ${literal} into Go value of type float64`);
      expectCode(await client().get(gauges(name)), 404);
    });
  }

  it('PUT, merge patch and JSON patch with 1e999: the object is unchanged', async () => {
    expectCode(await post(gauge('over-update', '{"i":1}')), 201);
    const current = await client().get(gauges('over-update'));
    const put = await client().request('PUT', gauges('over-update'), {
      rawBody: text(current).replace('"spec":{"i":1}', '"spec":{"i":1e999}'),
      headers: JSON_BODY,
    });
    expectStatus(put, 400, 'BadRequest', 'Gauge in version "v1" cannot be handled as a Gauge: json: cannot unmarshal number 1e999 into Go value of type float64');
    // kube's json-patch keeps the literal; decoding the patched object fails: 422, field "patch".
    const merge = await client().request('PATCH', gauges('over-update'), { rawBody: '{"spec":{"n":1e999}}', headers: { 'content-type': 'application/merge-patch+json' } });
    expectStatus(merge, 422, 'Invalid', /^ "" is invalid: patch: Invalid value: ".*\\"n\\":1e999.*": json: cannot unmarshal number 1e999 into Go value of type float64$/);
    assert.equal(merge.body.details.causes[0].field, 'patch');
    const jp = await client().request('PATCH', gauges('over-update'), { rawBody: '[{"op":"add","path":"/spec/n","value":-1e999}]', headers: { 'content-type': 'application/json-patch+json' } });
    expectStatus(jp, 422, 'Invalid', /json: cannot unmarshal number -1e999 into Go value of type float64$/);
    const after = await client().get(gauges('over-update'));
    assert.equal(after.body.metadata.resourceVersion, current.body.metadata.resourceVersion);
    assert.deepEqual(after.body.spec, { i: 1 });
  });
});

describe('int64 values above 2^53 are stored and served exactly', () => {
  const SPEC = '{"i":9007199254740993,"i64":9223372036854775807,"n":9223372036854775808,"free":{"min":-9223372036854775808,"u":12345678901234567890,"one":1.0,"zero":-0},"set":[9007199254740993,9007199254740995]}';
  /** What kube writes back: int64 literals as they are, float64s in Go's (and JavaScript's) digits. */
  const EXPECTED = [
    '"i":9007199254740993',
    '"i64":9223372036854775807',
    '"n":9223372036854776000',
    '"min":-9223372036854775808',
    '"u":12345678901234567000',
    '"one":1',
    '"zero":0',
    '"set":[9007199254740993,9007199254740995]',
  ];
  const expectExact = (body: string, what: string): void => {
    for (const e of EXPECTED) assert.ok(body.includes(e), `${what}: ${e} missing in ${body.slice(0, 600)}`);
  };
  let rv = '';

  it('POST answers, etcd holds, GET, list and the watch cache serve the exact digits', async () => {
    const created = await post(gauge('big', SPEC));
    expectCode(created, 201);
    expectExact(text(created), 'POST');
    rv = created.body.metadata.resourceVersion;
    expectExact(await stored('/registry/numbers.example.com/gauges/default/big'), 'etcd');
    expectExact(text(await client().get(gauges('big'))), 'GET');
    expectExact(text(await client().get(`${gauges('big')}?resourceVersion=0`)), 'GET resourceVersion=0');
    expectExact(text(await client().get(gauges())), 'list');
    expectExact(text(await client().get(`${gauges()}?resourceVersion=0`)), 'list resourceVersion=0');
    expectExact(text(await client().get(`${gauges()}?limit=1`)), 'list limit=1');
    const yaml = text(await client().get(gauges('big'), { headers: { accept: 'application/yaml' } }));
    for (const line of ['i: 9007199254740993', 'i64: 9223372036854775807', 'n: 9223372036854776000', 'min: -9223372036854775808', '- 9007199254740995']) {
      assert.ok(yaml.includes(line), `YAML: ${line} missing in ${yaml}`);
    }
  });

  it('watches (from the cache and from a resourceVersion) and Table cells', async () => {
    const fromCache = await client().get(`${gauges()}?watch=1&resourceVersion=0&timeoutSeconds=1`);
    expectExact(text(fromCache), 'watch resourceVersion=0');
    const prior = String(Number(rv) - 1);
    const replay = await client().get(`${gauges()}?watch=1&resourceVersion=${prior}&timeoutSeconds=1`);
    expectExact(text(replay), 'watch from a resourceVersion');
    const table = await client().get(gauges('big'), { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    expectCode(table, 200);
    assert.match(text(table), /"cells":\["big",9007199254740993\]/);
  });

  it('PUT, merge patch and JSON patch (add, and test comparing exactly)', async () => {
    const current = text(await client().get(gauges('big')));
    const put = await client().request('PUT', gauges('big'), { rawBody: current.replace('"i":9007199254740993', '"i":9007199254740997'), headers: JSON_BODY });
    expectCode(put, 200);
    assert.ok(text(put).includes('"i":9007199254740997'), text(put));
    const merge = await client().request('PATCH', gauges('big'), { rawBody: '{"spec":{"i64":-9223372036854775807}}', headers: { 'content-type': 'application/merge-patch+json' } });
    expectCode(merge, 200);
    assert.ok(text(merge).includes('"i64":-9223372036854775807'), text(merge));
    const jsonPatch = (ops: string): Promise<Response> => client().request('PATCH', gauges('big'), { rawBody: ops, headers: { 'content-type': 'application/json-patch+json' } });
    // 9007199254740996 is the float64 nearest 9007199254740997: only an exact test tells them apart.
    expectCode(await jsonPatch('[{"op":"test","path":"/spec/i","value":9007199254740996},{"op":"replace","path":"/spec/i","value":1}]'), 422);
    const ok = await jsonPatch('[{"op":"test","path":"/spec/i","value":9007199254740997},{"op":"add","path":"/spec/free/j","value":9007199254740999}]');
    expectCode(ok, 200);
    assert.ok(text(ok).includes('"i":9007199254740997') && text(ok).includes('"j":9007199254740999'), text(ok));
    const etcd = await stored('/registry/numbers.example.com/gauges/default/big');
    assert.ok(etcd.includes('"i":9007199254740997') && etcd.includes('"i64":-9223372036854775807') && etcd.includes('"j":9007199254740999'), etcd);
  });

  it('server-side apply (YAML): exact values, and a set of int64s in managedFields', async () => {
    const body = 'apiVersion: numbers.example.com/v1\nkind: Gauge\nmetadata:\n  name: applied\nspec:\n  i: 9007199254740993\n  set: [9007199254740993, 9007199254740995]\n';
    const res = await client().request('PATCH', `${gauges('applied')}?fieldManager=numbers`, { rawBody: body, headers: { 'content-type': 'application/apply-patch+yaml' } });
    expectCode(res, 201);
    assert.ok(text(res).includes('"i":9007199254740993') && text(res).includes('"set":[9007199254740993,9007199254740995]'), text(res));
    assert.ok(text(res).includes('"v:9007199254740993":{}') && text(res).includes('"v:9007199254740995":{}'), text(res));
    // Applying again with one element gone drops exactly that one.
    const again = await client().request('PATCH', `${gauges('applied')}?fieldManager=numbers`, { rawBody: body.replace(', 9007199254740995', ''), headers: { 'content-type': 'application/apply-patch+yaml' } });
    expectCode(again, 200);
    assert.ok(text(again).includes('"set":[9007199254740993]'), text(again));
  });

  it('kubectl apply and get keep int64 values exactly', async () => {
    const file = join(kubectlDir, 'gauge.yaml');
    writeFileSync(file, 'apiVersion: numbers.example.com/v1\nkind: Gauge\nmetadata:\n  name: kubectl\n  namespace: default\nspec:\n  i: 9007199254740993\n  i64: -9223372036854775807\n');
    const applied = await kubectl('apply', '-f', file);
    assert.equal(applied.code, 0, applied.stderr);
    const got = await kubectl('get', 'gauges.numbers.example.com', 'kubectl', '-n', 'default', '-o', 'jsonpath={.spec.i} {.spec.i64}');
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.stdout, '9007199254740993 -9223372036854775807');
    const cells = await kubectl('get', 'gauges.numbers.example.com', 'kubectl', '-n', 'default', '--no-headers');
    assert.match(cells.stdout, /^kubectl\s+9007199254740993\s*$/m);
  });

  it('YAML bodies: exact int64; an overflowing float stays a string (go-yaml), .inf is refused', async () => {
    const yaml = { 'content-type': 'application/yaml' };
    const doc = (name: string, spec: string): string => `apiVersion: numbers.example.com/v1\nkind: Gauge\nmetadata:\n  name: ${name}\nspec:\n${spec}`;
    const res = await post(doc('yaml-big', '  i: 9007199254740993\n  n: 1.5e300\n'), yaml);
    expectCode(res, 201);
    assert.ok(text(res).includes('"i":9007199254740993'), text(res));
    const over = await post(doc('yaml-over', '  i: 1e999\n'), yaml);
    expectStatus(over, 422, 'Invalid', /spec\.i: Invalid value: "string": spec\.i in body must be of type integer: "string"/);
    const inf = await post(doc('yaml-inf', '  n: .inf\n'), yaml);
    expectStatus(inf, 400, 'BadRequest', /json: unsupported value: \+Inf/);
  });
});

describe('CR schema validation with int64 values above 2^53 (kube-openapi, exact)', () => {
  const cases: Array<[string, string, number, RegExp?]> = [
    ['maximum 2^53 refuses 2^53 + 1', '{"max":9007199254740993}', 422, /spec\.max in body should be less than or equal to 9007199254740992/],
    ['maximum 2^53 takes 2^53', '{"max":9007199254740992}', 201],
    ['minimum 0 refuses -2^63', '{"min":-9223372036854775808}', 422, /spec\.min in body should be greater than or equal to 0/],
    ['multipleOf 3 takes 2^53 + 1 (3 × 3002399751580331)', '{"m":9007199254740993}', 201],
    ['multipleOf 3 refuses 2^53 + 2', '{"m":9007199254740994}', 422, /spec\.m in body should be a multiple of 3/],
    ['an enum holding 2^53 + 1 refuses 2^53', '{"e":9007199254740992}', 422, /spec\.e: Unsupported value: 9007199254740992: supported values: "1", "9007199254740993"/],
    ['an enum holding 2^53 + 1 takes it', '{"e":9007199254740993}', 201],
    ['type integer refuses 1e18 (a float64 for kube)', '{"i":1e18}', 422, /spec\.i in body must be of type integer: "number"/],
    ['type integer refuses 2^63 (beyond int64: a float64)', '{"i":9223372036854775808}', 422, /spec\.i in body must be of type integer: "number"/],
    ['type number takes an int64', '{"n":9223372036854775807}', 201],
    ['format int32 is not range-checked (kube strips it)', '{"i32":9007199254740993}', 201],
  ];
  let k = 0;
  for (const [what, spec, code, message] of cases) {
    it(what, async () => {
      const res = await post(gauge(`v${k++}`, spec));
      if (code === 422) expectStatus(res, 422, 'Invalid', message);
      else expectCode(res, code);
    });
  }
});

describe('built-in kinds: typed int32 fields refuse what Go refuses (400, the literal named)', () => {
  const leases = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
  const lease = (name: string, seconds: string): string => `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"${name}"},"spec":{"leaseDurationSeconds":${seconds}}}`;
  for (const literal of ['1e999', '2147483648', '9007199254740993', '1.5']) {
    it(`Lease spec.leaseDurationSeconds ${literal}`, async () => {
      const res = await client().request('POST', leases, { rawBody: lease(`l-${literal.replace(/\W/g, '')}`, literal), headers: JSON_BODY });
      expectStatus(res, 400, 'BadRequest', `Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal number ${literal} into Go struct field Lease.spec.leaseDurationSeconds of type int32`);
    });
  }

  it('an int32 at its bounds is kept; a number beyond float64 in an unknown field is dropped (201)', async () => {
    const ok = await client().request('POST', leases, { rawBody: lease('l-max', '2147483647'), headers: JSON_BODY });
    expectCode(ok, 201);
    assert.equal(ok.body.spec.leaseDurationSeconds, 2147483647);
    const cm = await client().request('POST', '/api/v1/namespaces/default/configmaps', {
      rawBody: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"unknown-number"},"data":{"a":"b"},"extra":1e999}',
      headers: JSON_BODY,
    });
    expectCode(cm, 201);
    assert.deepEqual(cm.body.data, { a: 'b' });
  });

  it('a strategic merge patch with 1e999 is a 400 (kube decodes the patch first)', async () => {
    expectCode(await client().request('POST', leases, { rawBody: lease('l-smp', '10'), headers: JSON_BODY }), 201);
    const res = await client().request('PATCH', `${leases}/l-smp`, { rawBody: '{"spec":{"leaseDurationSeconds":1e999}}', headers: { 'content-type': 'application/strategic-merge-patch+json' } });
    expectStatus(res, 400, 'BadRequest', 'json: cannot unmarshal number 1e999 into Go value of type float64');
  });
});
