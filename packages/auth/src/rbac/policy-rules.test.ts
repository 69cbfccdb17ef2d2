import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { breakdownRule, compactRules, compactString, covers, escalationMessage } from './policy-rules.js';
import type { PolicyRule } from '../authorizer.js';

const r = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule => ({
  verbs,
  apiGroups,
  resources,
  ...(resourceNames ? { resourceNames } : {}),
});
const u = (verbs: string[], ...nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

describe('covers (kube policy_comparator)', () => {
  it('exact and star matches', () => {
    assert.equal(covers([r(['get', 'list'], [''], ['pods'])], [r(['get'], [''], ['pods'])]).covered, true);
    assert.equal(covers([r(['*'], ['*'], ['*'])], [r(['delete'], ['apps'], ['deployments/scale'])]).covered, true);
    assert.equal(covers([r(['get'], ['*'], ['pods'])], [r(['get'], ['x', 'y'], ['pods'])]).covered, true);
  });

  it('reports each uncovered atom', () => {
    const { covered, missing } = covers([r(['get'], [''], ['pods'])], [r(['get', 'delete'], [''], ['pods', 'secrets'])]);
    assert.equal(covered, false);
    assert.deepEqual(missing, [r(['delete'], [''], ['pods']), r(['get'], [''], ['secrets']), r(['delete'], [''], ['secrets'])]);
  });

  it('*/subresource covers that subresource of every resource, not the resource', () => {
    assert.equal(covers([r(['get'], [''], ['*/status'])], [r(['get'], [''], ['pods/status'])]).covered, true);
    assert.equal(covers([r(['get'], [''], ['*/status'])], [r(['get'], [''], ['pods'])]).covered, false);
  });

  it('resource names: none covers any name; names cover only themselves', () => {
    assert.equal(covers([r(['get'], [''], ['pods'])], [r(['get'], [''], ['pods'], ['a'])]).covered, true);
    assert.equal(covers([r(['get'], [''], ['pods'], ['a'])], [r(['get'], [''], ['pods'], ['a'])]).covered, true);
    assert.equal(covers([r(['get'], [''], ['pods'], ['a'])], [r(['get'], [''], ['pods'], ['b'])]).covered, false);
    assert.equal(covers([r(['get'], [''], ['pods'], ['a'])], [r(['get'], [''], ['pods'])]).covered, false);
  });

  it('non-resource URLs with trailing-star prefixes', () => {
    assert.equal(covers([u(['get'], '/apis/*')], [u(['get'], '/apis/apps/v1')]).covered, true);
    assert.equal(covers([u(['get'], '*')], [u(['get'], '/healthz')]).covered, true);
    assert.equal(covers([u(['get'], '/healthz')], [u(['get'], '/healthz/etcd')]).covered, false);
    assert.equal(covers([r(['*'], ['*'], ['*'])], [u(['get'], '/healthz')]).covered, false);
  });

  it('empty servant is always covered', () => {
    assert.equal(covers([], []).covered, true);
  });
});

describe('rule formatting', () => {
  it('breakdownRule splits into atoms', () => {
    assert.equal(breakdownRule(r(['get', 'list'], ['', 'apps'], ['a', 'b'], ['x', 'y'])).length, 16);
    assert.deepEqual(breakdownRule(u(['get', 'post'], '/a')), [u(['get'], '/a'), u(['post'], '/a')]);
  });

  it('compactRules merges verbs of simple rules only', () => {
    const out = compactRules([r(['get'], [''], ['pods']), r(['list'], [''], ['pods']), u(['get'], '/x'), r(['get'], [''], ['pods'], ['n'])]);
    assert.deepEqual(out, [u(['get'], '/x'), r(['get', 'list'], [''], ['pods']), r(['get'], [''], ['pods'], ['n'])]);
  });

  it('compactString as Go %q of each list', () => {
    assert.equal(compactString(r(['get', 'list'], [''], ['secrets'])), '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}');
    assert.equal(compactString(r(['get'], ['apps'], ['deployments'], ['web'])), '{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["get"]}');
    assert.equal(compactString(u(['get'], '/metrics')), '{NonResourceURLs:["/metrics"], Verbs:["get"]}');
  });

  it("kube's escalation message: compacted, sorted, one rule a line", () => {
    const msg = escalationMessage(
      { name: 'bob', groups: ['devs', 'system:authenticated'] },
      [r(['get'], [''], ['pods'])],
      [r(['get', 'list'], [''], ['secrets', 'pods']), u(['get'], '/metrics')],
    );
    assert.equal(
      msg,
      'user "bob" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["pods"], Verbs:["list"]}\n' +
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}\n' +
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
    );
    assert.equal(escalationMessage({ name: 'a', groups: [] }, [r(['*'], ['*'], ['*'])], [r(['get'], [''], ['pods'])]), undefined);
  });
});
