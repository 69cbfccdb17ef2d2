import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Attributes } from './authorizer.js';
import { buildAuthorizer, validateAuthorizationOptions, type AuthorizerDeps } from './authorization-modes.js';

const deps: AuthorizerDeps = { rbacSource: { subscribe: () => () => undefined }, log: { error: () => undefined } };
const attrs = (groups: string[]): Attributes => ({
  user: { name: 'u', groups },
  verb: 'get',
  isResourceRequest: true,
  path: '',
  apiGroup: '',
  apiVersion: 'v1',
  namespace: 'a',
  resource: 'pods',
  subresource: '',
  name: '',
});
const webhook = { configFile: 'w.yaml', version: 'v1beta1', authorizedTTLms: 1, unauthorizedTTLms: 1 };

test('validation as kube: unknown, duplicate, Webhook without a file, a file without Webhook', () => {
  assert.deepEqual(validateAuthorizationOptions({ modes: ['RBAC'] }), []);
  assert.deepEqual(validateAuthorizationOptions({ modes: ['Webhook', 'RBAC'], webhook }), []);
  assert.deepEqual(validateAuthorizationOptions({ modes: [] }), ['at least one authorization-mode must be passed']);
  assert.deepEqual(validateAuthorizationOptions({ modes: ['Magic'] }), ['authorization-mode "Magic" is not a valid mode']);
  assert.deepEqual(validateAuthorizationOptions({ modes: ['RBAC', 'RBAC'] }), ['authorization-mode ["RBAC" "RBAC"] has mode specified more than once']);
  assert.deepEqual(validateAuthorizationOptions({ modes: ['Webhook'] }), ["authorization-mode Webhook's authorization config file not passed"]);
  assert.deepEqual(validateAuthorizationOptions({ modes: ['RBAC'], webhook }), ['cannot specify --authorization-webhook-config-file without mode Webhook']);
  assert.deepEqual(validateAuthorizationOptions({ modes: ['Node', 'RBAC'] }), []);
  assert.match(validateAuthorizationOptions({ modes: ['ABAC'] })[0]!, /"ABAC" is not supported by plinth/);
  assert.match(validateAuthorizationOptions({ modes: ['Webhook'], webhook: { ...webhook, version: 'v2' } })[0]!, /unsupported webhook authorizer version "v2"/);
});

test('modes in order through the union; system:masters always allowed', async () => {
  const deny = buildAuthorizer({ modes: ['AlwaysDeny', 'AlwaysAllow'] }, deps);
  assert.deepEqual(await deny.authorize(attrs([])), { decision: 'allow' }, 'AlwaysDeny has no opinion; the next mode decides');
  const onlyDeny = buildAuthorizer({ modes: ['AlwaysDeny'] }, deps);
  assert.deepEqual(await onlyDeny.authorize(attrs([])), { decision: 'no-opinion', reason: 'Everything is forbidden.' });
  assert.deepEqual(await onlyDeny.authorize(attrs(['system:masters'])), { decision: 'allow' });
  const r = await buildAuthorizer({ modes: ['AlwaysAllow'] }, deps).rulesFor!({ name: 'u', groups: [] }, 'a');
  assert.deepEqual(r.nonResourceRules, [{ verbs: ['*'], nonResourceURLs: ['*'] }]);
});
