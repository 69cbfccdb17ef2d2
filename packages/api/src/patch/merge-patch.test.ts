import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyMergePatch } from './merge-patch.js';

// RFC 7386 Appendix A, every example.
const rfcExamples: Array<[unknown, unknown, unknown]> = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [['a', 'b'], ['c', 'd'], ['c', 'd']],
  [{ a: 'b' }, ['c'], ['c']],
  [{ a: 'foo' }, null, null],
  [{ a: 'foo' }, 'bar', 'bar'],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

describe('applyMergePatch', () => {
  rfcExamples.forEach(([target, patch, want], i) => {
    it(`RFC 7386 appendix example ${i + 1}: ${JSON.stringify(target)} + ${JSON.stringify(patch)}`, () => {
      assert.deepEqual(applyMergePatch(target, patch), want);
    });
  });

  it('RFC 7386 section 3 example', () => {
    const target = { title: 'Goodbye!', author: { givenName: 'John', familyName: 'Doe' }, tags: ['example', 'sample'], content: 'This will be unchanged' };
    const patch = { title: 'Hello!', phoneNumber: '+01-123-456-7890', author: { familyName: null }, tags: ['example'] };
    assert.deepEqual(applyMergePatch(target, patch), {
      title: 'Hello!',
      author: { givenName: 'John' },
      tags: ['example'],
      content: 'This will be unchanged',
      phoneNumber: '+01-123-456-7890',
    });
  });

  it('merges nested metadata, deleting and adding labels', () => {
    const obj = { metadata: { name: 'x', labels: { a: '1', b: '2' }, annotations: { k: 'v' } }, secrets: [{ name: 's' }] };
    const got = applyMergePatch(obj, { metadata: { labels: { a: null, c: '3' } }, secrets: [{ name: 't' }] });
    assert.deepEqual(got, { metadata: { name: 'x', labels: { b: '2', c: '3' }, annotations: { k: 'v' } }, secrets: [{ name: 't' }] });
  });

  it('prunes nulls inside objects nested in a replacing array, as evanphx does', () => {
    assert.deepEqual(applyMergePatch({ a: 1 }, { a: [{ b: null, c: 1 }, null] }), { a: [{ c: 1 }, null] });
  });

  it('a null member for an absent key is a no-op', () => {
    assert.deepEqual(applyMergePatch({ a: 1 }, { b: null }), { a: 1 });
  });

  it('an empty patch leaves the document as it is', () => {
    assert.deepEqual(applyMergePatch({ a: { b: [1] } }, {}), { a: { b: [1] } });
  });

  it('does not mutate its inputs and does not alias them', () => {
    const target = { a: { b: 1 }, l: [1] };
    const patch = { a: { c: { d: 1 } }, n: { x: null, y: 2 } };
    const t0 = structuredClone(target);
    const p0 = structuredClone(patch);
    const got = applyMergePatch(target, patch) as { a: { c: { d: number } } };
    assert.deepEqual(target, t0);
    assert.deepEqual(patch, p0);
    got.a.c.d = 42;
    assert.deepEqual(patch, p0);
    assert.deepEqual(target, t0);
  });
});
