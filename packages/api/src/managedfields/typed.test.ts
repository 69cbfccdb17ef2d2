import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { builtinDefinitions } from '../kube-schema/definitions.js';
import { s } from '../schema.js';
import { pathString } from './fieldset.js';
import { TypedError, TypedSchema, compareObjects } from './typed.js';

const container = s.obj({ name: s.str(), image: s.str(), ports: s.arr(s.obj({ containerPort: s.int(), protocol: s.str() }), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['containerPort', 'protocol'] }) });
const schema = s.obj({
  spec: s.obj({
    replicas: s.int(),
    selector: s.obj({ matchLabels: s.map(s.str()) }),
    args: s.arr(s.str()),
    containers: s.arr(container, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
    extra: s.any(),
  }),
});
const ts = new TypedSchema(schema, builtinDefinitions());
const paths = (set: { paths(): Iterable<readonly unknown[]> }): string[] => [...set.paths()].map((p) => pathString(p as never));

const obj = (replicas: number, image = 'a:1', ports = [{ containerPort: 80, protocol: 'TCP' }]): unknown => ({
  spec: { replicas, selector: { matchLabels: { app: 'x', tier: 'web' } }, args: ['-v'], containers: [{ name: 'c', image, ports }], extra: { deep: { list: [1, 2] } } },
});

describe('compareObjects', () => {
  it('reports only what changed, with equal subtrees on both sides', () => {
    const c = compareObjects(ts, obj(1), obj(2));
    assert.deepEqual(paths(c.modified), ['.spec.replicas']);
    assert.deepEqual(paths(c.added), []);
    assert.deepEqual(paths(c.removed), []);
    const d = compareObjects(ts, obj(1), obj(1, 'a:2'));
    assert.deepEqual(paths(d.modified), ['.spec.containers[name="c"].image']);
  });

  it('reports a changed member of a map and of a schemaless value', () => {
    const a = obj(1) as { spec: { selector: { matchLabels: Record<string, string> }; extra: unknown } };
    const b = structuredClone(a);
    b.spec.selector.matchLabels['tier'] = 'db';
    b.spec.extra = { deep: { list: [1, 3] } };
    const c = compareObjects(ts, a, b);
    assert.deepEqual(paths(c.modified).sort(), ['.spec.extra.deep.list', '.spec.selector.matchLabels.tier']);
  });

  it('still rejects duplicate list keys inside a subtree equal on both sides', () => {
    const dup = [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 80, protocol: 'TCP' }];
    assert.throws(() => compareObjects(ts, obj(1, 'a:1', dup), obj(2, 'a:1', dup)), TypedError);
  });
});
