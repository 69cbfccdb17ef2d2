import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  SelectorParseError,
  escapeFieldValue,
  everythingFieldSelector,
  objectFieldSet,
  parseFieldSelector,
  unescapeFieldValue,
  validateFieldSelector,
} from './fields.js';
import * as barrel from './index.js';
import { clusterroles, configmaps, namespaces, secrets, serviceaccounts } from '../groups/index.js';

function parseErr(text: string): string {
  try {
    parseFieldSelector(text);
  } catch (e) {
    assert.ok(e instanceof SelectorParseError);
    return e.message;
  }
  assert.fail(`expected ${JSON.stringify(text)} to fail`);
}

describe('parseFieldSelector (kube fields.ParseSelector)', () => {
  const good: [string, string][] = [
    ['', ''],
    [',', ''],
    ['a=b', 'a=b'],
    ['a==b', 'a=b'],
    ['a!=b', 'a!=b'],
    ['x=a,y=b', 'x=a,y=b'],
    ['y=b,x=a', 'x=a,y=b'],
    ['a=b,,c=d', 'a=b,c=d'],
    ['a=', 'a='],
    ['=b', '=b'],
    ['a=!b', 'a=!b'],
    ['metadata.name=x\\,y', 'metadata.name=x\\,y'],
    ['a=x\\=y\\\\z', 'a=x\\=y\\\\z'],
  ];
  for (const [input, out] of good) {
    it(`parses ${JSON.stringify(input)}`, () => {
      assert.equal(parseFieldSelector(input).toString(), out);
    });
  }

  it('exposes unescaped requirements with normalized operators', () => {
    assert.deepEqual(
      parseFieldSelector('status.phase!=Active,metadata.name==a\\,b').requirements.map((r) => ({ ...r })),
      [
        { field: 'metadata.name', operator: '=', value: 'a,b' },
        { field: 'status.phase', operator: '!=', value: 'Active' },
      ],
    );
  });

  it('errors with kube texts', () => {
    assert.equal(parseErr('abc'), "invalid selector: 'abc'; can't understand 'abc'");
    assert.equal(parseErr('a=b,c'), "invalid selector: 'a=b,c'; can't understand 'c'");
    assert.equal(parseErr('a=b=c'), 'invalid field selector: unescaped character in value: 61');
    assert.equal(parseErr('a=b\\x'), 'invalid field selector: invalid escape sequence: \\x');
    assert.equal(parseErr('a=b\\'), 'invalid field selector: invalid escape sequence: \\');
    assert.equal(parseErr('a=b\\!'), 'invalid field selector: invalid escape sequence: \\!');
  });
});

describe('FieldSelector behaviour', () => {
  const f = { 'metadata.name': 'n1', 'metadata.namespace': 'ns', type: 'Opaque' };
  const cases: [string, boolean][] = [
    ['', true],
    ['metadata.name=n1', true],
    ['metadata.name=n2', false],
    ['metadata.name!=n2', true],
    ['metadata.name!=n1', false],
    ['metadata.name=n1,type=Opaque', true],
    ['metadata.name=n1,type!=Opaque', false],
    ['spec.missing=', true],
    ['spec.missing!=', false],
    ['spec.missing=x', false],
    ['spec.missing!=x', true],
    ['constructor=', true],
  ];
  for (const [sel, want] of cases) {
    it(`${JSON.stringify(sel)} -> ${want}`, () => {
      assert.equal(parseFieldSelector(sel).matches(f), want);
    });
  }

  it('empty()', () => {
    assert.equal(parseFieldSelector('').empty(), true);
    assert.equal(everythingFieldSelector().empty(), true);
    assert.equal(parseFieldSelector('a=b').empty(), false);
  });

  it('requiresExactMatch', () => {
    const s = parseFieldSelector('metadata.namespace!=x,metadata.name=a\\=b');
    assert.equal(s.requiresExactMatch('metadata.name'), 'a=b');
    assert.equal(s.requiresExactMatch('metadata.namespace'), undefined);
    assert.equal(s.requiresExactMatch('type'), undefined);
    assert.equal(parseFieldSelector('metadata.name==z').requiresExactMatch('metadata.name'), 'z');
    // kube sorts the raw terms, so the lexically first term wins.
    assert.equal(parseFieldSelector('metadata.name=b,metadata.name=a').requiresExactMatch('metadata.name'), 'a');
  });

  it('escape / unescape round trip', () => {
    for (const v of ['', 'plain', 'a,b', 'a=b', 'a\\b', '\\,=\\', 'ünï']) {
      assert.equal(unescapeFieldValue(escapeFieldValue(v)), v);
      assert.equal(parseFieldSelector(`k=${escapeFieldValue(v)}`).requirements[0]!.value, v);
    }
    assert.equal(escapeFieldValue('a\\b,c=d'), 'a\\\\b\\,c\\=d');
  });
});

describe('objectFieldSet', () => {
  it('secrets', () => {
    assert.deepEqual(objectFieldSet(secrets, { metadata: { name: 's', namespace: 'ns' }, type: 'kubernetes.io/tls' }), {
      'metadata.name': 's',
      'metadata.namespace': 'ns',
      type: 'kubernetes.io/tls',
    });
    assert.equal(objectFieldSet(secrets, { metadata: { name: 's', namespace: 'ns' } })['type'], '');
  });
  it('namespaces (cluster-scoped)', () => {
    assert.deepEqual(objectFieldSet(namespaces, { metadata: { name: 'kube-system' }, status: { phase: 'Active' } }), {
      'metadata.name': 'kube-system',
      'status.phase': 'Active',
      name: 'kube-system',
    });
    assert.equal(objectFieldSet(namespaces, { metadata: { name: 'x' } })['status.phase'], '');
  });
  it('serviceaccounts and unknown resources get the default attrs', () => {
    assert.deepEqual(objectFieldSet(serviceaccounts, { metadata: { name: 'default', namespace: 'ns' }, secrets: [] }), {
      'metadata.name': 'default',
      'metadata.namespace': 'ns',
    });
    assert.deepEqual(objectFieldSet(clusterroles, { metadata: { name: 'view' } }), { 'metadata.name': 'view' });
    assert.deepEqual(objectFieldSet(configmaps, { metadata: { name: 'c' } }, true), {
      'metadata.name': 'c',
      'metadata.namespace': '',
    });
  });
  it('works end to end with a parsed selector', () => {
    const sel = parseFieldSelector('type=Opaque,metadata.namespace=ns');
    validateFieldSelector(secrets, sel);
    assert.equal(sel.matches(objectFieldSet(secrets, { metadata: { name: 's', namespace: 'ns' }, type: 'Opaque' })), true);
    assert.equal(sel.matches(objectFieldSet(secrets, { metadata: { name: 's', namespace: 'ns' }, type: 'x' })), false);
  });
});

describe('validateFieldSelector', () => {
  it('accepts supported fields', () => {
    validateFieldSelector(secrets, parseFieldSelector('type=a,metadata.name=b,metadata.namespace=c'));
    validateFieldSelector(namespaces, parseFieldSelector('status.phase=Active,metadata.name=x'));
    validateFieldSelector(serviceaccounts, parseFieldSelector('metadata.name=a,metadata.namespace=b'));
    validateFieldSelector(configmaps, parseFieldSelector(''));
  });
  it('rejects with the conversion func message', () => {
    assert.throws(() => validateFieldSelector(secrets, parseFieldSelector('spec.x=1')), {
      name: 'SelectorParseError',
      message: 'field label not supported: spec.x',
    });
    assert.throws(() => validateFieldSelector(namespaces, parseFieldSelector('metadata.namespace=x')), {
      message: 'field label not supported: metadata.namespace',
    });
    assert.throws(() => validateFieldSelector(namespaces, parseFieldSelector('name=x')), {
      message: 'field label not supported: name',
    });
  });
  it('rejects with the default conversion message', () => {
    assert.throws(() => validateFieldSelector(serviceaccounts, parseFieldSelector('secrets=x')), {
      message: '"secrets" is not a known field selector: only "metadata.name", "metadata.namespace"',
    });
  });
  it('reports the first unsupported field in kube order', () => {
    assert.throws(() => validateFieldSelector(secrets, parseFieldSelector('z=1,b=2,type=x')), {
      message: 'field label not supported: b',
    });
  });
});

describe('index barrel', () => {
  it('re-exports the public API', () => {
    assert.equal(typeof barrel.parseLabelSelector, 'function');
    assert.equal(typeof barrel.labelSelectorFromObject, 'function');
    assert.equal(typeof barrel.parseFieldSelector, 'function');
    assert.equal(typeof barrel.objectFieldSet, 'function');
    assert.equal(typeof barrel.validateFieldSelector, 'function');
    assert.equal(barrel.SelectorParseError, SelectorParseError);
  });
});
