/**
 * Keys named like members of `Object.prototype` (`__proto__`, `constructor`, `prototype`,
 * `toString`, `hasOwnProperty`, ...) are ordinary data, as in kube, whose objects are Go maps and
 * structs: against a real server and etcd, as bob, who holds only the `edit` ClusterRole in
 * namespace `team`.
 *
 * - The two reproductions of issue 23: a merge patch of `metadata.__proto__` (with
 *   `retryAfterSeconds`, then `deletionTimestamp`) is answered as kube answers it — a member of
 *   metadata the type does not have, dropped by decoding: 200 with nothing changed — and leaves
 *   `Object.prototype` (the server runs in this process) without a new member; errors carry no
 *   `Retry-After`; every namespace stays. The same member through every other way in.
 * - Such keys round-trip exactly where kube keeps them: ConfigMap data, labels and annotations in
 *   JSON, YAML and Protobuf, through every patch type and apply, label selectors, custom resource
 *   fields kept by x-kubernetes-preserve-unknown-fields, CRD schemas with such property names,
 *   a mutating webhook's JSON patch, and impersonated users' extra keys.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { decodeProtobuf, encodeProtobuf } from '@plinth/apiserver';
import { eventually, tempDir, usePlinth, type Response } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';
import { Pki } from './auth-fixtures.js';

const dir = tempDir('plinth-proto-keys-');
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'bob-token,bob,bob-uid\n');
const env = usePlinth([`--token-auth-file=${tokenFile}`, '--feature-gates=APISelfSubjectReview=true']);
const BOB = { token: 'bob-token' };

const CM = '/api/v1/namespaces/team/configmaps';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const JSONPATCH = { 'content-type': 'application/json-patch+json' };
const STRATEGIC = { 'content-type': 'application/strategic-merge-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const PB = 'application/vnd.kubernetes.protobuf';

// ---------------------------------------------------------------------------------------------
// The process's prototypes: the server runs in this process, so its pollution would show here.
// ---------------------------------------------------------------------------------------------

const PROTOTYPES: Array<[string, object]> = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
];
const BASELINE = new Map(PROTOTYPES.map(([name, p]) => [name, Object.getOwnPropertyNames(p).sort()]));

/** No prototype gained a member (enumerable or not) since this file was loaded. */
function assertPrototypesClean(what: string): void {
  for (const [name, p] of PROTOTYPES) {
    assert.deepEqual(Object.keys(p), [], `${what}: ${name} has enumerable members`);
    assert.deepEqual(Object.getOwnPropertyNames(p).sort(), BASELINE.get(name), `${what}: ${name} changed`);
  }
}

/** Removes what a failing run added, so one failure does not break every later test. */
function scrubPrototypes(): void {
  for (const [name, p] of PROTOTYPES) {
    const base = new Set(BASELINE.get(name));
    for (const k of Object.getOwnPropertyNames(p)) if (!base.has(k)) delete (p as Record<string, unknown>)[k];
  }
}
afterEach(scrubPrototypes);

const c = () => env.plinth.client;

/** A JSON body as text: object literals in this file would turn `__proto__` into a prototype. */
function raw(text: string): { rawBody: string } {
  JSON.parse(text); // a typo here should fail the test, not reach the server
  return { rawBody: text };
}

function patch(path: string, headers: Record<string, string>, body: string, token?: string): Promise<Response> {
  return c().request('PATCH', path, { headers, rawBody: body, ...(token ? { token } : {}) });
}

/** Own keys of an object, in order (`__proto__` included when it is a member). */
const keysOf = (o: unknown): string[] => Object.keys(o as object);

after(() => rmSync(dir, { recursive: true, force: true }));

// One suite around everything: Node 20 runs root-level before hooks concurrently, so the setup
// below must wait in a suite hook for usePlinth's server.
describe('prototype-named keys', () => {
  before(async () => {
    expectCode(await c().post('/api/v1/namespaces', { metadata: { name: 'team' } }), 201);
    expectCode(
      await c().post('/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings', {
        metadata: { name: 'bob-edit' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bob' }],
      }),
      201,
    );
    expectCode(await c().post(CM, { metadata: { name: 'p1', labels: { app: 'p' } }, data: { a: '1' } }), 201);
    // The edit role is aggregated by a controller: wait until bob holds it.
    await eventually(async () => (await c().get(`${CM}/p1`, BOB)).status === 200, 10_000, 'bob may read configmaps in team');
  });

  // ---------------------------------------------------------------------------------------------
  // The reproductions
  // ---------------------------------------------------------------------------------------------

  describe('metadata.__proto__ from an editor', () => {
    /** The object as stored, compared after each attempt. */
    let stored: Record<string, unknown>;
    before(async () => {
      stored = (await c().get(`${CM}/p1`)).body;
    });

    async function unchanged(what: string, res: Response): Promise<void> {
      assertPrototypesClean(what);
      expectCode(res, 200, what);
      assert.deepEqual(res.body.metadata, stored['metadata'], `${what}: the answer's metadata`);
      assert.deepEqual(res.body.data, stored['data'], `${what}: the answer's data`);
      assert.deepEqual((await c().get(`${CM}/p1`)).body, stored, `${what}: the stored object`);
      // Errors carry no Retry-After (a polluted retryAfterSeconds put it on every error).
      const missing = await c().get(`${CM}/missing`, BOB);
      expectStatus(missing, 404, 'NotFound');
      assert.equal(missing.headers['retry-after'], undefined, `${what}: Retry-After on a 404`);
      expectCode(await c().get('/readyz'), 200, `${what}: /readyz`);
    }

    it('merge patch {"metadata":{"__proto__":{"retryAfterSeconds":7}}} with dryRun=All: 200, nothing changed, Object.prototype clean', async () => {
      const res = await patch(`${CM}/p1?dryRun=All`, MERGE, '{"metadata":{"__proto__":{"retryAfterSeconds":7}}}', BOB.token);
      await unchanged('merge patch of metadata.__proto__.retryAfterSeconds', res);
    });

    it('merge patch {"metadata":{"__proto__":{"deletionTimestamp":...}}}: 200, nothing changed, and every namespace stays', async () => {
      const res = await patch(`${CM}/p1?dryRun=All`, MERGE, '{"metadata":{"__proto__":{"deletionTimestamp":"2020-01-01T00:00:00Z"}}}', BOB.token);
      await unchanged('merge patch of metadata.__proto__.deletionTimestamp', res);
      // The namespace controller acts on a deletionTimestamp at once: give it time to act wrongly.
      await new Promise((r) => setTimeout(r, 1500));
      for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease', 'team']) {
        const got = await c().get(`/api/v1/namespaces/${ns}`);
        expectCode(got, 200, `namespace ${ns}`);
        assert.ok(!got.raw.toString().includes('deletionTimestamp'), `namespace ${ns} is being deleted: ${got.raw.toString()}`);
        assert.equal(got.body.status.phase, 'Active', `namespace ${ns}`);
      }
      expectCode(await c().get(`${CM}/p1`, BOB), 200, 'the configmap');
    });

    it('the same member through JSON patch, strategic merge patch, apply, create and update: kube drops it (200/201) or refuses the path (422)', async () => {
      const dts = '{"deletionTimestamp":"2020-01-01T00:00:00Z","retryAfterSeconds":7}';
      // A JSON patch may add the member: decoding drops it, as kube's typed decoding does.
      await unchanged('JSON patch add /metadata/__proto__', await patch(`${CM}/p1?dryRun=All`, JSONPATCH, `[{"op":"add","path":"/metadata/__proto__","value":${dts}}]`, BOB.token));
      await unchanged('strategic merge patch of metadata.__proto__', await patch(`${CM}/p1?dryRun=All`, STRATEGIC, `{"metadata":{"__proto__":${dts},"constructor":{"prototype":{"x":1}}}}`, BOB.token));
      await unchanged(
        'merge patch of metadata.constructor.prototype',
        await patch(`${CM}/p1?dryRun=All`, MERGE, '{"metadata":{"constructor":{"prototype":{"deletionTimestamp":"2020-01-01T00:00:00Z"}}}}', BOB.token),
      );
      // A path through a member the object does not have does not apply (evanphx: 422).
      for (const path of ['/metadata/__proto__/deletionTimestamp', '/constructor/prototype/x', '/metadata/constructor/prototype/x', '/data/__proto__/x', '/metadata/labels/toString/x']) {
        for (const op of ['add', 'replace']) {
          const res = await patch(`${CM}/p1?dryRun=All`, JSONPATCH, `[{"op":"${op}","path":"${path}","value":"2020-01-01T00:00:00Z"}]`, BOB.token);
          assertPrototypesClean(`JSON patch ${op} ${path}`);
          expectStatus(res, 422, 'Invalid');
          assert.match(res.body.details.causes[0].message, new RegExp(`^${op} operation does not apply: doc is missing path: "?${path}"?: missing value$`), `JSON patch ${op} ${path}`);
        }
      }
      for (const from of ['/metadata/__proto__', '/constructor', '/metadata/toString']) {
        const res = await patch(`${CM}/p1?dryRun=All`, JSONPATCH, `[{"op":"move","from":"${from}","path":"/metadata/labels/x"}]`, BOB.token);
        assertPrototypesClean(`JSON patch move from ${from}`);
        expectStatus(res, 422, 'Invalid');
      }
      const applied = await patch(
        `${CM}/p1?dryRun=All&fieldManager=bob&force=true`,
        APPLY,
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p1\n  __proto__:\n    deletionTimestamp: "2020-01-01T00:00:00Z"\n    retryAfterSeconds: 7\ndata:\n  a: "1"\n',
        BOB.token,
      );
      assertPrototypesClean('apply of metadata.__proto__');
      expectCode(applied, 200, 'apply');
      assert.equal(applied.body.metadata.deletionTimestamp, undefined);
      assert.ok(!Object.hasOwn(applied.body.metadata, '__proto__'), 'apply kept metadata.__proto__');
      assert.deepEqual(applied.body.data, { a: '1' });

      const created = await c().post(`${CM}?dryRun=All`, undefined, {
        ...BOB,
        ...raw(`{"metadata":{"name":"p2","__proto__":${dts},"constructor":{"prototype":${dts}}},"__proto__":{"immutable":true},"data":{"k":"v"}}`),
      });
      assertPrototypesClean('create with metadata.__proto__');
      expectCode(created, 201, 'create');
      assert.ok(!Object.hasOwn(created.body.metadata, '__proto__') && !Object.hasOwn(created.body.metadata, 'constructor'), JSON.stringify(created.body.metadata));
      assert.equal(created.body.metadata.deletionTimestamp, undefined);
      assert.equal(created.body.immutable, undefined);

      const updated = await c().put(`${CM}/p1?dryRun=All`, undefined, {
        ...BOB,
        ...raw(JSON.stringify(stored).replace('"metadata":{', `"metadata":{"__proto__":${dts},`)),
      });
      await unchanged('update with metadata.__proto__', updated);
    });
  });

  // ---------------------------------------------------------------------------------------------
  // Round trips where kube keeps the keys
  // ---------------------------------------------------------------------------------------------

  describe('keys named like Object.prototype members are kept as data', () => {
    const DATA = '{"__proto__":"a","constructor":"b","prototype":"c","toString":"d","hasOwnProperty":"e","valueOf":"f","__defineGetter__":"g","isPrototypeOf":"h"}';
    const LABELS = '{"constructor":"x","toString":"y","hasOwnProperty":"z"}';
    const ANNOTATIONS = '{"constructor":"x","valueOf":"v","prototype":"p"}';

    async function readBack(name: string): Promise<Record<string, unknown>> {
      const json = await c().get(`${CM}/${name}`, BOB);
      expectCode(json, 200);
      const yaml = await c().get(`${CM}/${name}`, { ...BOB, headers: { accept: 'application/yaml' } });
      assert.deepEqual(parseYaml(yaml.raw.toString()), json.body, 'YAML answer');
      const pb = await c().get(`${CM}/${name}`, { ...BOB, headers: { accept: PB } });
      expectCode(pb, 200);
      assert.deepEqual(decodeProtobuf(pb.raw), json.body, 'Protobuf answer');
      return json.body;
    }

    it('ConfigMap data, labels and annotations: created in JSON, YAML and Protobuf, read back in each', async () => {
      const body = `{"metadata":{"name":"keys","labels":${LABELS},"annotations":${ANNOTATIONS}},"data":${DATA}}`;
      const created = await c().post(CM, undefined, { ...BOB, ...raw(body) });
      assertPrototypesClean('create');
      expectCode(created, 201);
      assert.deepEqual(created.body.data, JSON.parse(DATA));
      const back = await readBack('keys');
      assert.deepEqual(keysOf(back['data']), keysOf(JSON.parse(DATA)));
      assert.deepEqual((back['metadata'] as { labels: unknown }).labels, JSON.parse(LABELS));
      assert.deepEqual((back['metadata'] as { annotations: unknown }).annotations, JSON.parse(ANNOTATIONS));

      const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keys-yaml\n  labels: ${LABELS}\ndata: ${DATA}\n`;
      expectCode(await c().post(CM, undefined, { ...BOB, rawBody: yaml, headers: { 'content-type': 'application/yaml' } }), 201);
      assert.deepEqual((await readBack('keys-yaml'))['data'], JSON.parse(DATA));

      const pbBody = encodeProtobuf(JSON.parse(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"keys-pb","labels":${LABELS}},"data":${DATA}}`));
      expectCode(await c().post(CM, undefined, { ...BOB, rawBody: pbBody, headers: { 'content-type': PB } }), 201);
      assert.deepEqual((await readBack('keys-pb'))['data'], JSON.parse(DATA));
      assertPrototypesClean('the round trips');
    });

    it('every patch type and apply change and remove such keys', async () => {
      let res = await patch(`${CM}/keys`, MERGE, '{"data":{"__proto__":"a2","constructor":null,"watch":"new"}}', BOB.token);
      expectCode(res, 200, 'merge patch');
      assert.deepEqual(res.body.data, JSON.parse('{"__proto__":"a2","prototype":"c","toString":"d","hasOwnProperty":"e","valueOf":"f","__defineGetter__":"g","isPrototypeOf":"h","watch":"new"}'));
      res = await patch(
        `${CM}/keys`,
        JSONPATCH,
        '[{"op":"replace","path":"/data/toString","value":"d2"},{"op":"remove","path":"/data/prototype"},{"op":"add","path":"/data/constructor","value":"b2"},{"op":"test","path":"/data/__proto__","value":"a2"},{"op":"copy","from":"/data/__proto__","path":"/data/copied"},{"op":"move","from":"/data/valueOf","path":"/data/moved"}]',
        BOB.token,
      );
      expectCode(res, 200, 'JSON patch');
      assert.deepEqual(res.body.data, JSON.parse('{"__proto__":"a2","toString":"d2","hasOwnProperty":"e","__defineGetter__":"g","isPrototypeOf":"h","watch":"new","constructor":"b2","copied":"a2","moved":"f"}'));
      res = await patch(`${CM}/keys`, STRATEGIC, '{"data":{"hasOwnProperty":"e2","__proto__":null},"metadata":{"labels":{"toString":null,"valueOf":"w"}}}', BOB.token);
      expectCode(res, 200, 'strategic merge patch');
      assert.ok(!Object.hasOwn(res.body.data, '__proto__'));
      assert.equal(res.body.data.hasOwnProperty, 'e2');
      assert.deepEqual(res.body.metadata.labels, JSON.parse('{"constructor":"x","hasOwnProperty":"z","valueOf":"w"}'));
      const applied = await patch(`${CM}/keys?fieldManager=bob-apply&force=true`, APPLY, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keys\ndata:\n  __proto__: a3\n  toString: d3\n`, BOB.token);
      expectCode(applied, 200, 'apply');
      assert.equal(Object.hasOwn(applied.body.data, '__proto__') && applied.body.data['__proto__'], 'a3');
      assert.equal(applied.body.data.toString, 'd3');
      // The applier owns the keys it applied (managedFields name them as any other field).
      const mine = applied.body.metadata.managedFields.find((m: { manager: string }) => m.manager === 'bob-apply');
      assert.ok(Object.hasOwn(mine.fieldsV1['f:data'], 'f:__proto__'), JSON.stringify(mine));
      const back = await readBack('keys');
      assert.deepEqual(back['data'], applied.body.data);
      assertPrototypesClean('the patches');
    });

    it('label selectors match such label keys, and only where the object has them', async () => {
      const names = async (selector: string): Promise<string[]> => {
        const res = await c().get(`${CM}?labelSelector=${encodeURIComponent(selector)}`, BOB);
        expectCode(res, 200, selector);
        return res.body.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort();
      };
      assert.deepEqual(await names('constructor=x'), ['keys', 'keys-pb', 'keys-yaml']);
      assert.deepEqual(await names('hasOwnProperty'), ['keys', 'keys-pb', 'keys-yaml']);
      assert.deepEqual(await names('app,!constructor'), ['p1']);
      assert.deepEqual(await names('isPrototypeOf'), []);
      assert.deepEqual(await names('valueOf in (w)'), ['keys']);
      expectCode(await c().get(`${CM}?labelSelector=__proto__`, BOB), 400, 'an invalid label key');
      assertPrototypesClean('the selectors');
    });

    it('an impersonated user keeps extra keys named __proto__ and constructor', async () => {
      const res = await c().post('/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, {
        headers: { 'impersonate-user': 'bob', 'impersonate-extra-__proto__': 'x', 'impersonate-extra-constructor': 'y' },
      });
      assertPrototypesClean('impersonation');
      expectCode(res, 201);
      assert.deepEqual(res.body.status.userInfo.extra, JSON.parse('{"__proto__":["x"],"constructor":["y"]}'));
    });
  });

  // ---------------------------------------------------------------------------------------------
  // Custom resources and CRD schemas
  // ---------------------------------------------------------------------------------------------

  describe('custom resources', () => {
    const CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    const PROTOS = '/apis/example.com/v1/namespaces/team/protos';
    before(async () => {
      const crd = JSON.parse(`{
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "protos.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
          "names": {"plural": "protos", "singular": "proto", "kind": "Proto", "listKind": "ProtoList"},
          "versions": [{"name": "v1", "served": true, "storage": true,
            "additionalPrinterColumns": [{"name": "Proto", "type": "string", "jsonPath": ".typed.__proto__"}],
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
              "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
              "typed": {"type": "object", "properties": {
                "__proto__": {"type": "string", "maxLength": 5},
                "constructor": {"type": "string", "default": "dflt"},
                "prototype": {"type": "integer"}}}}}}}]}}`);
      expectCode(await c().post(CRD, crd), 201);
      await eventually(async () => (await c().get(PROTOS)).status === 200, 10_000, 'protos served');
    });

    it('fields kept by x-kubernetes-preserve-unknown-fields are stored and read back exactly; schema properties of these names are validated, defaulted and pruned', async () => {
      const spec = '{"__proto__":"p","prototype":{"__proto__":{"x":1},"constructor":[1]},"toString":"t","constructor":{"prototype":{"valueOf":true}}}';
      const created = await c().post(PROTOS, undefined, raw(`{"apiVersion":"example.com/v1","kind":"Proto","metadata":{"name":"one"},"spec":${spec},"typed":{"__proto__":"p","prototype":3,"toString":4}}`));
      assertPrototypesClean('create a custom resource');
      expectCode(created, 201);
      assert.deepEqual(created.body.spec, JSON.parse(spec));
      // Defaulted where absent (no inherited `constructor` counts), pruned where undeclared.
      assert.deepEqual(created.body.typed, JSON.parse('{"__proto__":"p","prototype":3,"constructor":"dflt"}'));
      const got = await c().get(`${PROTOS}/one`);
      assert.deepEqual(got.body.spec, JSON.parse(spec));
      assert.deepEqual(got.body.typed, created.body.typed);
      const table = await c().get(`${PROTOS}/one`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
      assert.deepEqual(table.body.rows[0].cells, ['one', 'p']);

      // Validated against its own schema: a number is no string, six characters are too long.
      for (const [value, cause] of [['5', 'typed.__proto__ in body must be of type string: "integer"'], ['"longer"', 'typed.__proto__ in body should be at most 5 chars long']]) {
        const bad = await c().post(PROTOS, undefined, raw(`{"apiVersion":"example.com/v1","kind":"Proto","metadata":{"name":"bad"},"typed":{"__proto__":${value}}}`));
        expectStatus(bad, 422, 'Invalid');
        assert.equal(bad.body.details.causes[0].field, 'typed.__proto__');
        assert.ok(bad.body.details.causes[0].message.endsWith(cause), bad.body.details.causes[0].message);
      }
      // A resource without the member is valid (nothing inherited is validated).
      const two = await c().post(PROTOS, undefined, raw('{"apiVersion":"example.com/v1","kind":"Proto","metadata":{"name":"two"},"typed":{}}'));
      expectCode(two, 201);
      assert.deepEqual(two.body.typed, { constructor: 'dflt' });

      let res = await patch(`${PROTOS}/one`, MERGE, '{"spec":{"__proto__":"q","prototype":{"__proto__":{"y":2}},"toString":null},"typed":{"__proto__":"r"}}');
      expectCode(res, 200, 'merge patch');
      assert.deepEqual(res.body.spec, JSON.parse('{"__proto__":"q","prototype":{"__proto__":{"x":1,"y":2},"constructor":[1]},"constructor":{"prototype":{"valueOf":true}}}'));
      assert.equal(res.body.typed['__proto__'], 'r');
      res = await patch(`${PROTOS}/one`, JSONPATCH, '[{"op":"add","path":"/spec/prototype/__proto__/z","value":3},{"op":"add","path":"/spec/prototype/constructor/-","value":2},{"op":"remove","path":"/spec/constructor/prototype"}]');
      expectCode(res, 200, 'JSON patch');
      assert.deepEqual(res.body.spec, JSON.parse('{"__proto__":"q","prototype":{"__proto__":{"x":1,"y":2,"z":3},"constructor":[1,2]},"constructor":{}}'));
      res = await patch(`${PROTOS}/one?fieldManager=apply&force=true`, APPLY, 'apiVersion: example.com/v1\nkind: Proto\nmetadata:\n  name: one\nspec:\n  prototype:\n    __proto__:\n      w: 4\n');
      expectCode(res, 200, 'apply');
      assert.deepEqual(res.body.spec, JSON.parse('{"__proto__":"q","prototype":{"__proto__":{"x":1,"y":2,"z":3,"w":4},"constructor":[1,2]},"constructor":{}}'));
      assert.deepEqual((await c().get(`${PROTOS}/one`)).body.spec, res.body.spec);
      assertPrototypesClean('custom resource patches');
    });
  });

  // ---------------------------------------------------------------------------------------------
  // A mutating webhook's JSON patch
  // ---------------------------------------------------------------------------------------------

  describe('a mutating webhook', () => {
    let server: Server;
    const MUTATING = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
    before(async () => {
      const certs = join(dir, 'certs');
      mkdirSync(certs);
      const pki = new Pki(certs).rootCA('ca').serving('server', 'ca');
      server = createServer({ cert: pki.pem('server'), key: pki.keyPem('server') }, (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          const ops = '[{"op":"add","path":"/metadata/__proto__","value":{"deletionTimestamp":"2020-01-01T00:00:00Z"}},{"op":"add","path":"/data/__proto__","value":"from-webhook"},{"op":"add","path":"/data/constructor","value":"too"}]';
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(ops).toString('base64') } }));
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as AddressInfo).port;
      const hook = {
        name: 'proto.example.com',
        clientConfig: { url: `https://127.0.0.1:${port}/mutate`, caBundle: Buffer.from(pki.pem('ca')).toString('base64') },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        objectSelector: { matchLabels: { hooked: 'yes' } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      };
      expectCode(await c().post(MUTATING, { metadata: { name: 'proto' }, webhooks: [hook] }), 201);
      await eventually(async () => (await c().get(`${MUTATING}?resourceVersion=0`)).body.items.length === 1, 10_000, 'the webhook configuration in the cache');
    });
    after(async () => {
      server?.closeAllConnections();
      await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    });

    it('adds data keys named __proto__ and constructor; a __proto__ member it adds to metadata is dropped by decoding, as kube drops it', async () => {
      const res = await c().post(CM, { metadata: { name: 'hooked', labels: { hooked: 'yes' } }, data: { a: '1' } }, BOB);
      assertPrototypesClean('the webhook patch');
      expectCode(res, 201);
      assert.deepEqual(res.body.data, JSON.parse('{"a":"1","__proto__":"from-webhook","constructor":"too"}'));
      assert.equal(res.body.metadata.deletionTimestamp, undefined);
      assert.ok(!Object.hasOwn(res.body.metadata, '__proto__'), JSON.stringify(res.body.metadata));
      const got = await c().get(`${CM}/hooked`, BOB);
      assert.deepEqual(got.body.data, res.body.data);
      assert.ok(!got.raw.toString().includes('deletionTimestamp'), got.raw.toString());
    });
  });
});
