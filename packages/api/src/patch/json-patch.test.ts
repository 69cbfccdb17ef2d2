import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PatchError } from './errors.js';
import { applyJsonPatch } from './json-patch.js';

function patchError(fn: () => unknown, code: number, message: string | RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof PatchError, `expected a PatchError, got ${String(e)}`);
    assert.equal(e.code, code);
    if (typeof message === 'string') assert.equal(e.message, message);
    else assert.match(e.message, message);
    return true;
  });
}

describe('applyJsonPatch: RFC 6902 appendix A', () => {
  it('A.1 adding an object member', () => {
    assert.deepEqual(applyJsonPatch({ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }]), { baz: 'qux', foo: 'bar' });
  });

  it('A.2 adding an array element', () => {
    assert.deepEqual(applyJsonPatch({ foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }]), { foo: ['bar', 'qux', 'baz'] });
  });

  it('A.3 removing an object member', () => {
    assert.deepEqual(applyJsonPatch({ baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }]), { foo: 'bar' });
  });

  it('A.4 removing an array element', () => {
    assert.deepEqual(applyJsonPatch({ foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }]), { foo: ['bar', 'baz'] });
  });

  it('A.5 replacing a value', () => {
    assert.deepEqual(applyJsonPatch({ baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }]), { baz: 'boo', foo: 'bar' });
  });

  it('A.6 moving a value', () => {
    const doc = { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } };
    assert.deepEqual(applyJsonPatch(doc, [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }]), {
      foo: { bar: 'baz' },
      qux: { corge: 'grault', thud: 'fred' },
    });
  });

  it('A.7 moving an array element', () => {
    assert.deepEqual(applyJsonPatch({ foo: ['all', 'grass', 'cows', 'eat'] }, [{ op: 'move', from: '/foo/1', path: '/foo/3' }]), {
      foo: ['all', 'cows', 'eat', 'grass'],
    });
  });

  it('A.8 testing a value: success', () => {
    const doc = { baz: 'qux', foo: ['a', 2, 'c'] };
    const ops = [
      { op: 'test', path: '/baz', value: 'qux' },
      { op: 'test', path: '/foo/1', value: 2 },
    ];
    assert.deepEqual(applyJsonPatch(doc, ops), doc);
  });

  it('A.9 testing a value: error', () => {
    patchError(() => applyJsonPatch({ baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }]), 422, 'testing value /baz failed: test failed');
  });

  it('A.10 adding a nested member object', () => {
    assert.deepEqual(applyJsonPatch({ foo: 'bar' }, [{ op: 'add', path: '/child', value: { grandchild: {} } }]), {
      foo: 'bar',
      child: { grandchild: {} },
    });
  });

  it('A.11 ignoring unrecognized elements', () => {
    assert.deepEqual(applyJsonPatch({ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }]), { foo: 'bar', baz: 'qux' });
  });

  it('A.12 adding to a nonexistent target', () => {
    patchError(
      () => applyJsonPatch({ foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }]),
      422,
      'add operation does not apply: doc is missing path: "/baz/bat": missing value',
    );
  });

  it('A.13 invalid JSON patch document (duplicate "op": the last one wins, and fails)', () => {
    const ops: unknown = JSON.parse('[{ "op": "add", "path": "/baz", "value": "qux", "op": "remove" }]');
    patchError(() => applyJsonPatch({ foo: 'bar' }, ops), 422, "error in remove for path: '/baz': Unable to remove nonexistent key: baz: missing value");
  });

  it('A.14 ~ escape ordering', () => {
    const doc = { '/': 9, '~1': 10 };
    assert.deepEqual(applyJsonPatch(doc, [{ op: 'test', path: '/~01', value: 10 }]), doc);
  });

  it('A.15 comparing strings and numbers', () => {
    patchError(() => applyJsonPatch({ '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }]), 422, 'testing value /~01 failed: test failed');
  });

  it('A.16 adding an array value', () => {
    assert.deepEqual(applyJsonPatch({ foo: ['bar'] }, [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }]), { foo: ['bar', ['abc', 'def']] });
  });
});

describe('applyJsonPatch: kube (evanphx/json-patch v4) behaviour', () => {
  const sa = { metadata: { name: 'sa', labels: { a: 'x', 'k8s.io/app': 'y' } }, secrets: [{ name: 's1' }, { name: 's2' }] };

  it('escapes ~1 in label keys', () => {
    const got = applyJsonPatch(sa, [{ op: 'replace', path: '/metadata/labels/k8s.io~1app', value: 'z' }]);
    assert.deepEqual(got, { ...sa, metadata: { ...sa.metadata, labels: { a: 'x', 'k8s.io/app': 'z' } } });
  });

  it('a failing test reports the path', () => {
    patchError(() => applyJsonPatch(sa, [{ op: 'test', path: '/metadata/labels/a', value: 'nope' }]), 422, 'testing value /metadata/labels/a failed: test failed');
  });

  it('test of a missing member against null passes; against a value fails', () => {
    assert.deepEqual(applyJsonPatch(sa, [{ op: 'test', path: '/metadata/labels/zz', value: null }]), sa);
    patchError(() => applyJsonPatch(sa, [{ op: 'test', path: '/metadata/labels/zz', value: 'v' }]), 422, 'testing value /metadata/labels/zz failed: test failed');
  });

  it('test of the whole document', () => {
    assert.deepEqual(applyJsonPatch({ a: [1] }, [{ op: 'test', path: '', value: { a: [1] } }]), { a: [1] });
    patchError(() => applyJsonPatch({ a: [1] }, [{ op: 'test', path: '', value: { a: [2] } }]), 422, 'testing value  failed: test failed');
  });

  it('replace of a missing object member sets it (v4 quirk)', () => {
    assert.deepEqual(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '/foo', value: 2 }]), { a: 1, foo: 2 });
  });

  it('replace of a missing array index fails', () => {
    patchError(() => applyJsonPatch({ l: [1] }, [{ op: 'replace', path: '/l/3', value: 2 }]), 422, 'replace operation does not apply: doc is missing key: /l/3: missing value');
  });

  it('replace under a missing parent fails', () => {
    patchError(() => applyJsonPatch({}, [{ op: 'replace', path: '/a/b', value: 2 }]), 422, 'replace operation does not apply: doc is missing path: /a/b: missing value');
  });

  it('replace of the root with an object swaps the document', () => {
    assert.deepEqual(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }]), { b: 2 });
  });

  it('remove of an array index out of range', () => {
    patchError(
      () => applyJsonPatch(sa, [{ op: 'remove', path: '/secrets/5' }]),
      422,
      "error in remove for path: '/secrets/5': Unable to access invalid index: 5: invalid index referenced",
    );
  });

  it('negative indexes count from the end', () => {
    assert.deepEqual(applyJsonPatch({ l: [1, 2, 3] }, [{ op: 'remove', path: '/l/-1' }]), { l: [1, 2] });
    assert.deepEqual(applyJsonPatch({ l: [1, 2] }, [{ op: 'add', path: '/l/-1', value: 9 }]), { l: [1, 2, 9] });
  });

  it('add with a non-numeric array index', () => {
    patchError(
      () => applyJsonPatch({ l: [] }, [{ op: 'add', path: '/l/x', value: 1 }]),
      422,
      `error in add for path: '/l/x': value was not a proper array index: 'x': strconv.Atoi: parsing "x": invalid syntax`,
    );
  });

  it('add past the end of an array', () => {
    patchError(() => applyJsonPatch({ l: [1] }, [{ op: 'add', path: '/l/2', value: 1 }]), 422, "error in add for path: '/l/2': Unable to access invalid index: 2: invalid index referenced");
  });

  it('add at the root fails (doc is missing path "")', () => {
    patchError(() => applyJsonPatch({}, [{ op: 'add', path: '', value: {} }]), 422, 'add operation does not apply: doc is missing path: "": missing value');
  });

  it('add through a scalar fails', () => {
    patchError(() => applyJsonPatch({ a: 1 }, [{ op: 'add', path: '/a/b', value: 1 }]), 422, 'add operation does not apply: doc is missing path: "/a/b": missing value');
  });

  it('copy deep-copies the value', () => {
    const got = applyJsonPatch({ a: { b: [1] } }, [
      { op: 'copy', from: '/a', path: '/c' },
      { op: 'add', path: '/c/b/-', value: 2 },
    ]);
    assert.deepEqual(got, { a: { b: [1] }, c: { b: [1, 2] } });
  });

  it('move of a missing member fails', () => {
    patchError(() => applyJsonPatch({ a: 1 }, [{ op: 'move', from: '/x', path: '/y' }]), 422, "error in move for path: 'x': Unable to remove nonexistent key: x: missing value");
  });

  it('move into its own child fails', () => {
    patchError(
      () => applyJsonPatch({ a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/a/c' }]),
      422,
      'move operation does not apply: doc is missing destination path: /a/c: missing value',
    );
  });

  it('a missing "from"', () => {
    patchError(() => applyJsonPatch({ a: 1 }, [{ op: 'copy', path: '/b' }]), 422, 'copy operation failed to decode from: operation, missing from field: missing value');
  });

  it('operations apply in order and stop at the first failure', () => {
    const ops = [
      { op: 'add', path: '/metadata/labels/new', value: 'v' },
      { op: 'test', path: '/metadata/labels/new', value: 'v' },
      { op: 'remove', path: '/secrets/0' },
    ];
    assert.deepEqual(applyJsonPatch(sa, ops), { metadata: { name: 'sa', labels: { a: 'x', 'k8s.io/app': 'y', new: 'v' } }, secrets: [{ name: 's2' }] });
  });

  it('does not mutate its inputs and does not alias op values', () => {
    const doc = { a: { b: 1 }, l: [1] };
    const value = { deep: { x: 1 } };
    const ops = [
      { op: 'add', path: '/v', value },
      { op: 'add', path: '/v/deep/y', value: 2 },
      { op: 'remove', path: '/a/b' },
      { op: 'add', path: '/l/0', value: 0 },
    ];
    const d0 = structuredClone(doc);
    const o0 = structuredClone(ops);
    assert.deepEqual(applyJsonPatch(doc, ops), { a: {}, l: [0, 1], v: { deep: { x: 1, y: 2 } } });
    assert.deepEqual(doc, d0);
    assert.deepEqual(ops, o0);
  });
});

describe('applyJsonPatch: malformed patches', () => {
  it('a patch that is not a list is a 400', () => {
    patchError(() => applyJsonPatch({}, { op: 'add' }), 400, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
    patchError(() => applyJsonPatch({}, 'x'), 400, 'json: cannot unmarshal string into Go value of type jsonpatch.Patch');
  });

  it('an operation that is not an object is a 400', () => {
    patchError(() => applyJsonPatch({}, [1]), 400, 'json: cannot unmarshal number into Go value of type jsonpatch.Operation');
  });

  it('a null patch is no operations', () => {
    assert.deepEqual(applyJsonPatch({ a: 1 }, null), { a: 1 });
  });

  it('a missing or unknown op', () => {
    patchError(() => applyJsonPatch({}, [{ path: '/a' }]), 422, 'Unexpected kind: unknown');
    patchError(() => applyJsonPatch({}, [{ op: 7, path: '/a' }]), 422, 'Unexpected kind: unknown');
    patchError(() => applyJsonPatch({}, [{ op: 'frobnicate', path: '/a' }]), 422, 'Unexpected kind: frobnicate');
  });

  it('a missing or non-string path', () => {
    patchError(() => applyJsonPatch({}, [{ op: 'add', value: 1 }]), 422, 'add operation failed to decode path: missing value');
    patchError(() => applyJsonPatch({}, [{ op: 'replace', value: 1 }]), 422, 'replace operation failed to decode path: operation missing path field: missing value');
    patchError(() => applyJsonPatch({}, [{ op: 'test', path: 3 }]), 422, 'test operation failed to decode path: json: cannot unmarshal number into Go value of type string');
  });

  it('more than 10,000 operations is a 413', () => {
    const ops = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/a', value: 1 }));
    patchError(() => applyJsonPatch({ a: 1 }, ops), 413, 'The allowed maximum operations in a JSON patch is 10000, got 10001');
    assert.deepEqual(applyJsonPatch({ a: 1 }, ops.slice(1)), { a: 1 });
  });
});

// Each insert or remove in a JavaScript array moves the items after it: 10,000 operations at the
// head of a long list cost operations × length. Long lists are chunked while the patch runs.
// (~0.1 s here, ~5 s as splices; an explicit bound, as node:test's timeout cannot stop
// synchronous code.)
describe('applyJsonPatch: long lists', () => {
  it('9,999 inserts, removes, a test, a move and a copy at the head of a 2,000,000-item list, with tests, copies and moves between them', () => {
    const n = 2_000_000;
    const doc = { spec: { values: Array.from({ length: n }, (_, i) => i) }, m: { a: 1 } };
    const ops: unknown[] = [];
    // Each pair puts a new head in and takes the previous head out: [-k, 1, 2, 3, ...].
    for (let i = 0; i < 4998; i++) ops.push({ op: 'add', path: '/spec/values/0', value: -1 - i }, { op: 'remove', path: '/spec/values/1' });
    ops.push({ op: 'test', path: '/spec/values/0', value: -4998 }, { op: 'move', from: '/spec/values/0', path: '/spec/values/-' }, { op: 'copy', from: '/spec/values/2', path: '/m/third' });
    const t0 = performance.now();
    const out = applyJsonPatch(doc, ops) as { spec: { values: number[] }; m: Record<string, unknown> };
    const took = performance.now() - t0;
    assert.ok(took < 2000, `took ${Math.round(took)} ms: not linear`);
    const values = out.spec.values;
    assert.equal(values.length, n);
    assert.deepEqual(values.slice(0, 3), [1, 2, 3]);
    assert.equal(values[n - 2], n - 1);
    assert.equal(values[n - 1], -4998);
    assert.deepEqual(out.m, { a: 1, third: 3 });
    assert.equal(doc.spec.values[0], 0, 'the input is not changed');
  });
});
