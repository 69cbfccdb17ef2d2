import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { aggregatedRules } from './clusterrole-aggregation.js';

const cr = (name: string, labels: Record<string, string>, rules: object[], selectors?: object[]) => ({
  metadata: { name, labels },
  rules: rules as never,
  ...(selectors ? { aggregationRule: { clusterRoleSelectors: selectors as never } } : {}),
});

describe('aggregatedRules', () => {
  const pods = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
  const secrets = { verbs: ['get'], apiGroups: [''], resources: ['secrets'] };
  const url = { verbs: ['get'], nonResourceURLs: ['/x'] };

  it('unions the rules of matching roles in name order, without duplicates or itself', () => {
    const view = cr('view', { 'agg-edit': 'true' }, [url], [{ matchLabels: { 'agg-view': 'true' } }]);
    const all = [view, cr('z-extra', { 'agg-view': 'true' }, [secrets, pods]), cr('a-base', { 'agg-view': 'true' }, [pods]), cr('other', {}, [url])];
    assert.deepEqual(aggregatedRules(view, all), [pods, secrets]);
  });

  it('any selector matches; an empty list of rules still counts', () => {
    const agg = cr('agg', {}, [], [{ matchLabels: { a: '1' } }, { matchExpressions: [{ key: 'b', operator: 'Exists' }] }]);
    assert.deepEqual(aggregatedRules(agg, [agg, cr('x', { a: '1' }, [pods]), cr('y', { b: '' }, [secrets])]), [pods, secrets]);
    assert.deepEqual(aggregatedRules(agg, [agg]), []);
  });

  it('empty lists in rules compare as absent', () => {
    const agg = cr('agg', {}, [], [{ matchLabels: { a: '1' } }]);
    assert.deepEqual(aggregatedRules(agg, [cr('x', { a: '1' }, [pods, { ...pods, resourceNames: [] }])]), [pods]);
  });

  it('roles without aggregationRule, or with an invalid selector, are left alone', () => {
    assert.equal(aggregatedRules(cr('plain', {}, [pods]), []), undefined);
    assert.equal(aggregatedRules(cr('bad', {}, [], [{ matchExpressions: [{ key: 'a', operator: 'Bogus' }] }]), []), undefined);
  });
});
