import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DecodeError, QUANTITY, conform, s, type Schema } from './schema.js';
import { builtinResources } from './groups/index.js';
import { builtinDefinitions } from './kube-schema/definitions.js';

const defs = new Map<string, Schema>([
  ['Port', s.obj({ name: s.str(), containerPort: s.int() })],
  ['Container', s.obj({ name: s.str(), ports: s.arr(s.ref('Port')), args: s.arr(s.str()) })],
]);
const root = s.obj({
  spec: s.obj({ containers: s.arr(s.ref('Container')), matrix: s.arr(s.arr(s.ref('Port'))), labels: s.map(s.str()) }),
});

describe('conform', () => {
  it('names the Go field path of a wrong type, without list indexes', () => {
    assert.throws(
      () => conform({ spec: { containers: [{ name: 'a' }, { name: 'b', ports: [{ containerPort: 'x' }] }] } }, root, defs, 'Pod'),
      (e: unknown) => e instanceof DecodeError && e.message === 'json: cannot unmarshal string into Go struct field Pod.spec.containers.ports.containerPort of type int32',
    );
    assert.throws(
      () => conform({ spec: { labels: { a: 1 } } }, root, defs, 'Pod'),
      (e: unknown) => e instanceof DecodeError && e.message === 'json: cannot unmarshal number into Go struct field Pod.spec.labels.a of type string',
    );
    assert.throws(
      () => conform({ spec: { containers: {} } }, root, defs, 'Pod'),
      (e: unknown) => e instanceof DecodeError && e.message === 'json: cannot unmarshal object into Go struct field Pod.spec.containers of type []Container',
    );
  });

  it('collects unknown fields by their JSON path, list indexes included', () => {
    const unknown: string[] = [];
    const out = conform(
      { spec: { containers: [{ name: 'a', foo: 1 }, { name: 'b', ports: [{ bar: 2, containerPort: 80 }] }], matrix: [[{}, { baz: 3 }]], extra: true }, top: 1 },
      root,
      defs,
      'Pod',
      1,
      unknown,
    );
    assert.deepEqual(unknown, ['spec.containers[0].foo', 'spec.containers[1].ports[0].bar', 'spec.matrix[0][1].baz', 'spec.extra', 'top']);
    assert.deepEqual(out, { spec: { containers: [{ name: 'a' }, { name: 'b', ports: [{ containerPort: 80 }] }], matrix: [[{}, {}]] } });
  });

  it('prefixes unknown paths with the path of the value it starts at', () => {
    const unknown: string[] = [];
    conform({ containers: [{ zzz: 1 }] }, s.obj({ containers: s.arr(s.ref('Container')) }), defs, 'Pod.spec', 2, unknown, 'spec');
    conform([{ qqq: 1 }], s.arr(s.ref('Container')), defs, 'Pod.spec.containers', 3, unknown, 'spec.containers');
    assert.deepEqual(unknown, ['spec.containers[0].zzz', 'spec.containers[0].qqq']);
  });

  it('keeps keys named like Object.prototype members as data', () => {
    const body = JSON.parse('{"spec":{"labels":{"__proto__":"x","constructor":"y"}}}') as unknown;
    const out = conform(body, root, defs, 'Pod') as { spec: { labels: Record<string, string> } };
    assert.deepEqual(Object.keys(out.spec.labels), ['__proto__', 'constructor']);
    assert.equal(Object.getPrototypeOf(out.spec.labels), Object.prototype);
  });
});

describe('conform with Go\'s always-written zero values', () => {
  const all = builtinDefinitions();
  const ds = all.get('io.k8s.api.apps.v1.DaemonSet')!;
  it('adds the integer and boolean fields Go never omits, in the structs the object has', () => {
    const body = { spec: { template: { spec: { containers: [{ name: 'c', ports: [{ name: 'http' }] }] } } }, status: { numberAvailable: 2 } };
    const out = conform(body, ds, all, 'DaemonSet', 1, undefined, '', false, true) as Record<string, any>;
    assert.deepEqual(out.status, { numberAvailable: 2, currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 });
    // ContainerPort.containerPort has no omitempty; a pointer or an omitempty field is not added.
    assert.deepEqual(out.spec.template.spec.containers[0].ports, [{ name: 'http', containerPort: 0 }]);
    assert.equal('revisionHistoryLimit' in out.spec, false);
    assert.equal('minReadySeconds' in out.spec, false);
    // A value the client gave is kept.
    const given = conform({ status: { numberReady: 3 } }, ds, all, 'DaemonSet', 1, undefined, '', false, true) as Record<string, any>;
    assert.equal(given.status.numberReady, 3);
  });
  it('keeps the empty string of a field without omitempty, and writes one where it is missing', () => {
    const pod = all.get('io.k8s.api.core.v1.Pod')!;
    const body = {
      spec: { containers: [{ name: 'c', image: 'nginx', workingDir: '' }] },
      status: { containerStatuses: [{ name: 'c', imageID: '', ready: false, restartCount: 0 }] },
    };
    const out = conform(body, pod, all, 'Pod', 1, undefined, '', false, true) as Record<string, any>;
    // workingDir has omitempty: dropped. imageID has none: kept; image is missing: written as "".
    assert.equal('workingDir' in out.spec.containers[0], false);
    assert.equal(out.status.containerStatuses[0].imageID, '');
    assert.equal(out.status.containerStatuses[0].image, '');
    // Without zeros (an apply configuration) a given "" is still kept, and nothing is added.
    const applied = conform(body, pod, all, 'Pod', 1, undefined, '', false, false) as Record<string, any>;
    assert.equal(applied.status.containerStatuses[0].imageID, '');
    assert.equal('image' in applied.status.containerStatuses[0], false);
  });
  it('adds nothing to an apply configuration (decoded without zeros) or where no struct is given', () => {
    const body = { status: { numberAvailable: 2 } };
    assert.deepEqual(conform(body, ds, all, 'DaemonSet', 1, undefined, '', false, false), body);
    assert.deepEqual(conform({ spec: {} }, ds, all, 'DaemonSet', 1, undefined, '', false, true), { spec: {} });
  });
});

describe('conform in place', () => {
  // Objects generated from every built-in kind's schema, with what makes conform change a tree:
  // unknown fields (dropped), nulls and empty strings, lists and maps (omitted), quantities
  // (canonicalized), wrong types (refused), at every position of an object's members.
  const kdefs = builtinDefinitions();
  const deref = (sch: Schema | undefined): Schema | undefined => {
    for (let i = 0; sch?.$ref && i < 32; i++) sch = kdefs.get(sch.$ref);
    return sch;
  };
  let seed = 99;
  const r = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const odd = (): unknown => [null, '', [], {}, 'x', 5, true, '1500m', { u: [1] }][Math.floor(r() * 9)];
  function gen(schema: Schema | undefined, depth: number): unknown {
    const sch = deref(schema);
    if (r() < 0.01) return odd();
    if (!sch || depth > 8) return 'leaf';
    if (sch.goType === QUANTITY || sch['x-kubernetes-int-or-string']) return ['100m', '1.5Gi', 3, '20%'][Math.floor(r() * 4)];
    if (sch.type === 'array') return Array.from({ length: Math.floor(r() * 3) }, () => gen(sch.items, depth + 1));
    if (sch.properties || sch.additionalProperties) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(sch.properties ?? {})) {
        if (r() < 0.03) out[`unknown${k}`] = odd();
        if (r() < (depth < 2 ? 0.7 : 0.35)) out[k] = gen(v, depth + 1);
      }
      if (sch.additionalProperties && typeof sch.additionalProperties === 'object') for (const k of ['cpu', 'memory', 'a/b']) if (r() < 0.4) out[k] = gen(sch.additionalProperties, depth + 1);
      return out;
    }
    if (sch.type === 'integer' || sch.type === 'number') return Math.floor(r() * 100);
    if (sch.type === 'boolean') return r() < 0.5;
    if (sch.format === 'date-time' || sch.goType?.endsWith('MicroTime')) return '2024-01-02T03:04:05.000000Z';
    if (sch.format === 'byte') return 'YWJj';
    return ['a', '', 'web'][Math.floor(r() * 3)];
  }
  const run = (body: unknown, schema: Schema, kind: string, inPlace: boolean): { out?: string; unknown: string[]; error?: string } => {
    const unknown: string[] = [];
    try {
      return { out: JSON.stringify(conform(body, schema, kdefs, kind, 1, unknown, '', inPlace)), unknown };
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      return { error: e.message, unknown };
    }
  };

  it('gives what the copying walk gives, member order included, for every built-in kind', () => {
    let compared = 0;
    let refused = 0;
    let same = 0;
    for (const def of builtinResources()) {
      for (let i = 0; i < 20; i++) {
        const text = JSON.stringify(gen(def.schema, 0));
        const copied = run(JSON.parse(text), def.schema, def.kind, false);
        const body = JSON.parse(text) as unknown;
        const inPlace = run(body, def.schema, def.kind, true);
        assert.deepEqual(inPlace, copied, `${def.kind}: ${text}`);
        compared++;
        if (copied.error) refused++;
        else if (JSON.stringify(body) === copied.out) same++;
      }
    }
    // Both outcomes were exercised, and in-place changes reached the caller's tree.
    assert.ok(refused > compared / 20 && refused < compared / 2, `${refused} of ${compared} refused`);
    assert.ok(same > 0);
  });

  it('returns the caller\'s objects where nothing is dropped, and rebuilds an object that loses a member', () => {
    const body = JSON.parse('{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80}]}],"labels":{"x":"y"}}}') as { spec: { containers: unknown[]; labels: unknown } };
    const { containers, labels } = body.spec;
    const out = conform(body, root, defs, 'Pod', 1, undefined, '', true) as typeof body;
    assert.equal(out, body);
    assert.equal(out.spec.containers, containers);
    assert.equal(out.spec.labels, labels);
    const dropped = JSON.parse('{"spec":{"extra":1,"containers":[{"bad":true,"name":"a","args":[]}]}}') as { spec: { containers: unknown[] } };
    const was = dropped.spec.containers[0];
    const got = conform(dropped, root, defs, 'Pod', 1, undefined, '', true) as typeof dropped;
    assert.deepEqual(got, { spec: { containers: [{ name: 'a' }] } });
    assert.notEqual(got.spec.containers[0], was);
    assert.equal(got.spec.containers, dropped.spec.containers);
  });
});
