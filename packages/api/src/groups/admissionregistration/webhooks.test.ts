import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../field-errors.js';
import type { StoredObject } from '../../types.js';
import { splitURL } from './webhooks.js';
import { mutatingwebhookconfigurations, validatingwebhookconfigurations } from './index.js';

const base = { name: 'a.example.com', clientConfig: { url: 'https://h.example.com/x' }, sideEffects: 'None', admissionReviewVersions: ['v1'] };

function config(hooks: Array<Record<string, unknown>>): StoredObject {
  return { metadata: { name: 'c' }, webhooks: hooks.map((h) => ({ ...base, ...h })) } as StoredObject;
}

function errors(hooks: Array<Record<string, unknown>>, mutating = false): string[] {
  const def = mutating ? mutatingwebhookconfigurations : validatingwebhookconfigurations;
  const obj = config(hooks);
  def.strategy.defaults?.(obj);
  return def.strategy.validate(obj).map(fieldErrorString);
}

describe('webhook configuration defaults', () => {
  it('as SetDefaults_{Mutating,Validating}Webhook, _Rule and _ServiceReference', () => {
    const m = config([{ rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }] }, { name: 'b.example.com', clientConfig: { service: { namespace: 'n', name: 's' } } }]);
    mutatingwebhookconfigurations.strategy.defaults!(m);
    const [a, b] = m['webhooks'] as Array<Record<string, any>>;
    assert.deepEqual(
      [a!['failurePolicy'], a!['matchPolicy'], a!['timeoutSeconds'], a!['namespaceSelector'], a!['objectSelector'], a!['reinvocationPolicy'], a!['rules'][0].scope],
      ['Fail', 'Equivalent', 10, {}, {}, 'Never', '*'],
    );
    assert.equal(b!['clientConfig'].service.port, 443);
    const v = config([{ failurePolicy: 'Ignore', timeoutSeconds: 5 }]);
    validatingwebhookconfigurations.strategy.defaults!(v);
    const [h] = v['webhooks'] as Array<Record<string, unknown>>;
    assert.deepEqual([h!['failurePolicy'], h!['timeoutSeconds'], 'reinvocationPolicy' in h!], ['Ignore', 5, false]);
  });
});

describe('webhook configuration validation', () => {
  it('accepts a minimal webhook', () => {
    assert.deepEqual(errors([{}]), []);
    assert.deepEqual(errors([{ reinvocationPolicy: 'IfNeeded' }], true), []);
  });

  it('rule resources: wildcards and sub-resources', () => {
    const r = (resources: string[]) => errors([{ rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources }] }]);
    assert.deepEqual(r(['pods', 'pods/log', '*/scale', 'deployments/*']), []);
    assert.deepEqual(r(['pods/*', 'pods/log']), [`webhooks[0].rules[0].resources[1]: Invalid value: "pods/log": if 'pods/*' is present, must not specify pods/log`]);
    assert.deepEqual(r(['*/status', 'pods/status']), [`webhooks[0].rules[0].resources[1]: Invalid value: "pods/status": if '*/status' is present, must not specify pods/status`]);
    assert.deepEqual(r(['*/*', 'pods']), [`webhooks[0].rules[0].resources: Invalid value: []string{"*/*", "pods"}: if '*/*' is present, must not specify other resources`]);
    assert.deepEqual(r(['*', 'pods/log']), []);
    assert.deepEqual(r([]), ['webhooks[0].rules[0].resources: Required value']);
    assert.deepEqual(r(['']), ['webhooks[0].rules[0].resources[0]: Required value']);
  });

  it('rule operations, versions and scope', () => {
    const e = errors([{ rules: [{ operations: ['*', 'CREATE'], apiGroups: [], apiVersions: ['v1', ''], resources: ['pods'], scope: 'Global' }] }]);
    assert.deepEqual(e, [
      `webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE"}: if '*' is present, must not specify other operations`,
      'webhooks[0].rules[0].apiGroups: Required value',
      'webhooks[0].rules[0].apiVersions[1]: Required value',
      'webhooks[0].rules[0].scope: Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"',
    ]);
  });

  it('names, policies, versions and client config', () => {
    assert.deepEqual(errors([{ name: '' }]), ['webhooks[0].name: Required value']);
    assert.match(errors([{ name: 'Bad_Name.example.com' }])[0]!, /^webhooks\[0\]\.name: Invalid value: "Bad_Name.example.com": a lowercase RFC 1123 subdomain/);
    assert.deepEqual(errors([{ failurePolicy: 'Maybe', matchPolicy: 'Loose' }]), [
      'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"',
      'webhooks[0].matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"',
    ]);
    assert.deepEqual(errors([{ reinvocationPolicy: 'Always' }], true), ['webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"']);
    assert.deepEqual(errors([{ timeoutSeconds: 0 }]), ['webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds']);
    assert.deepEqual(errors([{ admissionReviewVersions: ['v1', 'v1', 'V2'] }]), [
      'webhooks[0].admissionReviewVersions[1]: Invalid value: "v1": duplicate version',
      `webhooks[0].admissionReviewVersions[2]: Invalid value: "V2": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ]);
    assert.deepEqual(errors([{ clientConfig: { url: 'https://h/x#frag' } }]), ['webhooks[0].clientConfig.url: Invalid value: "frag": fragments are not permitted in the URL']);
    assert.deepEqual(errors([{ clientConfig: { url: 'https:///x' } }]), [`webhooks[0].clientConfig.url: Invalid value: "": host must be provided; desired format: https://host[/path]`]);
    assert.deepEqual(errors([{ clientConfig: { url: 'https://h', service: { namespace: 'n', name: 's' } } }]), ['webhooks[0].clientConfig: Required value: exactly one of url or service is required']);
    // kube swaps name and namespace in these two messages; Go's path check drops the first byte unseen.
    assert.deepEqual(errors([{ clientConfig: { service: { namespace: 'n', port: 70000, path: 'a//B' } } }]), [
      'webhooks[0].clientConfig.service.namespace: Required value: service namespace is required',
      'webhooks[0].clientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive',
      `webhooks[0].clientConfig.service.path: Invalid value: "a//B": must start with a '/'`,
      'webhooks[0].clientConfig.service.path: Invalid value: "a//B": segment[0] may not be empty',
      'webhooks[0].clientConfig.service.path: Invalid value: "a//B": segment[1] may not be empty',
      `webhooks[0].clientConfig.service.path: Invalid value: "a//B": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ]);
    assert.deepEqual(errors([{ namespaceSelector: { matchExpressions: [{ key: 'k', operator: 'In' }] } }]), ["webhooks[0].namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"]);
  });

  it('splits URLs as Go does', () => {
    assert.deepEqual(splitURL('HTTPS://u:p@h:1/x?q#f'), { scheme: 'https', user: 'u:p', host: 'h:1', query: 'q', fragment: 'f' });
    assert.deepEqual(splitURL('h/x'), { scheme: '', user: undefined, host: '', query: '', fragment: '' });
  });
});
