import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Catalog, builtinResources, clusterroles, namespaces, secrets, StatusError, type StoredObject } from '@plinth/api';
import { operationOptions, type AdmissionAttributes } from '../interfaces.js';
import { webhooksOf, type Webhook } from './config.js';
import { matchNamespaceSelector, matchObjectSelector, ruleMatches, shouldCallHook } from './matching.js';
import { CallingWebhookError, checkDryRun, createAdmissionReview as createReview, toStatusError, verifyAdmissionResponse } from './review.js';
import { versionedAttributes } from './versioned.js';
import { createMutatingWebhookPlugin } from './mutating.js';
import { createValidatingWebhookPlugin } from './validating.js';
import { webhookURL } from './client.js';

const user = { name: 'alice', uid: 'u1', groups: ['devs', 'system:authenticated'] };

function secretAttrs(extra: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  const object: StoredObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns', labels: { app: 'web' } } };
  return {
    operation: 'CREATE',
    resource: secrets,
    subresource: '',
    namespace: 'ns',
    name: 's',
    kind: { group: '', version: 'v1', kind: 'Secret' },
    object,
    oldObject: undefined,
    options: operationOptions('CREATE', {}),
    user,
    dryRun: false,
    ...extra,
  };
}

function hook(extra: Record<string, unknown> = {}, config = 'c'): Webhook {
  const [h] = webhooksOf([
    {
      metadata: { name: config },
      webhooks: [
        {
          name: 'h.example.com',
          clientConfig: { url: 'https://127.0.0.1:1/p' },
          rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: '*' }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 10,
          failurePolicy: 'Fail',
          ...extra,
        },
      ],
    } as StoredObject,
  ]);
  return h!;
}

/** A review of the request's own resource (no equivalent resource involved). */
function createAdmissionReview(h: Webhook, a: AdmissionAttributes): ReturnType<typeof createReview> {
  const inv = { hook: h, resource: a.resource, subresource: a.subresource, kind: a.kind };
  return createReview(inv, a, { kind: inv.kind, object: a.object, oldObject: a.oldObject, converted: false });
}

const rule = (r: Record<string, unknown>): Record<string, unknown> => ({ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], ...r });

describe('rule matching', () => {
  it('operations, groups, versions and resources, with wildcards', () => {
    const a = secretAttrs();
    assert.equal(ruleMatches(rule({ operations: ['CREATE'] }), a), true);
    assert.equal(ruleMatches(rule({ operations: ['UPDATE', 'DELETE'] }), a), false);
    assert.equal(ruleMatches(rule({ apiGroups: [''] }), a), true);
    assert.equal(ruleMatches(rule({ apiGroups: ['apps'] }), a), false);
    assert.equal(ruleMatches(rule({ apiVersions: ['v1beta1'] }), a), false);
    assert.equal(ruleMatches(rule({ resources: ['secrets'] }), a), true);
    assert.equal(ruleMatches(rule({ resources: ['configmaps'] }), a), false);
  });

  it('sub-resources: `*` is resources only, `x/*`, `*/y` and `*/*`', () => {
    const main = secretAttrs();
    const status = { ...secretAttrs(), resource: namespaces, subresource: 'status', namespace: '', name: 'n', operation: 'UPDATE' as const };
    assert.equal(ruleMatches(rule({ resources: ['*'] }), status), false);
    assert.equal(ruleMatches(rule({ resources: ['namespaces'] }), status), false);
    assert.equal(ruleMatches(rule({ resources: ['namespaces/status'] }), status), true);
    assert.equal(ruleMatches(rule({ resources: ['namespaces/*'] }), status), true);
    assert.equal(ruleMatches(rule({ resources: ['*/status'] }), status), true);
    assert.equal(ruleMatches(rule({ resources: ['*/*'] }), status), true);
    assert.equal(ruleMatches(rule({ resources: ['*/*'] }), main), true);
    assert.equal(ruleMatches(rule({ resources: ['secrets/*'] }), main), true);
    assert.equal(ruleMatches(rule({ resources: ['*/status'] }), main), false);
  });

  it('scope: namespaces are cluster-scoped; namespaced objects are not', () => {
    const ns = { ...secretAttrs(), resource: namespaces, namespace: '', name: 'team', operation: 'UPDATE' as const };
    const cr = { ...secretAttrs(), resource: clusterroles, namespace: '', name: 'cr' };
    const sec = secretAttrs();
    assert.deepEqual([ns, cr, sec].map((a) => ruleMatches(rule({ scope: 'Cluster' }), a)), [true, true, false]);
    assert.deepEqual([ns, cr, sec].map((a) => ruleMatches(rule({ scope: 'Namespaced' }), a)), [false, false, true]);
    assert.deepEqual([ns, cr, sec].map((a) => ruleMatches(rule({ scope: '*' }), a)), [true, true, true]);
  });
});

describe('selectors', () => {
  const labelled = (name: string, labels: Record<string, string>) => async (n: string) => (n === name ? ({ metadata: { name, labels } } as StoredObject) : undefined);

  it('namespaceSelector reads the namespace; cluster-scoped objects always match', async () => {
    const h = hook({ namespaceSelector: { matchLabels: { env: 'prod' } } });
    assert.equal(await matchNamespaceSelector(h, secretAttrs(), labelled('ns', { env: 'prod' })), true);
    assert.equal(await matchNamespaceSelector(h, secretAttrs(), labelled('ns', { env: 'dev' })), false);
    const cr = { ...secretAttrs(), resource: clusterroles, namespace: '' };
    assert.equal(await matchNamespaceSelector(h, cr, async () => undefined), true);
    await assert.rejects(matchNamespaceSelector(h, secretAttrs(), async () => undefined), (e: unknown) => e instanceof StatusError && e.code === 404);
  });

  it('a namespace being created or updated is matched on its own labels; a deleted one on the stored', async () => {
    const h = hook({ namespaceSelector: { matchLabels: { env: 'prod' } } });
    const obj: StoredObject = { metadata: { name: 'team', labels: { env: 'prod' } } };
    const create = { ...secretAttrs(), resource: namespaces, namespace: '', name: 'team', object: obj };
    assert.equal(await matchNamespaceSelector(h, create, async () => undefined), true);
    const del = { ...create, operation: 'DELETE' as const, object: undefined, oldObject: obj };
    assert.equal(await matchNamespaceSelector(h, del, labelled('team', { env: 'dev' })), false);
  });

  it('objectSelector matches the new or the old object', () => {
    const h = hook({ objectSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] } });
    assert.equal(matchObjectSelector(h, secretAttrs()), true);
    const other: StoredObject = { metadata: { name: 's', labels: { app: 'db' } } };
    assert.equal(matchObjectSelector(h, secretAttrs({ object: other })), false);
    assert.equal(matchObjectSelector(h, secretAttrs({ operation: 'UPDATE', object: other, oldObject: secretAttrs().object })), true);
    assert.equal(matchObjectSelector(h, secretAttrs({ operation: 'DELETE', object: undefined, oldObject: other })), false);
  });

  it('shouldCallHook needs a matching rule', async () => {
    assert.equal((await shouldCallHook(hook(), secretAttrs(), async () => undefined))?.resource, secrets);
    assert.equal(await shouldCallHook(hook({ rules: [rule({ resources: ['pods'] })] }), secretAttrs(), async () => undefined), undefined);
    assert.equal(await shouldCallHook(hook({ rules: [] }), secretAttrs(), async () => undefined), undefined);
  });
});

describe('matchPolicy Equivalent', () => {
  const catalog = new Catalog(builtinResources());
  const coreEvents = catalog.lookup('', 'v1', 'events')!;
  const groupEvents = catalog.lookup('events.k8s.io', 'v1', 'events')!;
  const equivalents = (d: Parameters<Catalog['equivalentResources']>[0], sub: string) => catalog.equivalentResources(d, sub);
  const eventAttrs = (): AdmissionAttributes =>
    secretAttrs({
      resource: groupEvents,
      name: 'e',
      kind: { group: 'events.k8s.io', version: 'v1', kind: 'Event' },
      object: { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'e', namespace: 'ns' }, note: 'hello', regarding: { kind: 'Pod', name: 'p' } } as StoredObject,
    });
  const coreRule = rule({ apiGroups: [''], apiVersions: ['v1'], resources: ['events'] });

  it('finds the equivalent resources of one storage, across groups', () => {
    assert.deepEqual(
      catalog.equivalentResources(groupEvents).map((d) => `${d.group}/${d.version}`),
      catalog.all().filter((d) => d.plural === 'events').map((d) => `${d.group}/${d.version}`),
    );
    assert.ok(catalog.equivalentResources(groupEvents).includes(coreEvents));
    assert.deepEqual(catalog.equivalentResources(secrets), [secrets]);
    assert.deepEqual(catalog.equivalentResources(coreEvents, 'status'), []);
  });

  it('calls a webhook of another version with that resource and kind, and the object converted', async () => {
    const attrs = eventAttrs();
    const inv = await shouldCallHook(hook({ rules: [coreRule] }), attrs, async () => undefined, equivalents);
    assert.equal(inv?.resource, coreEvents);
    assert.deepEqual(inv?.kind, { group: '', version: 'v1', kind: 'Event' });
    const objects = await versionedAttributes(attrs, inv!);
    assert.equal(objects.converted, true);
    assert.equal(objects.object?.apiVersion, 'v1');
    assert.equal(objects.object?.['message'], 'hello');
    assert.equal(attrs.object?.apiVersion, 'events.k8s.io/v1', 'the request\'s object is not changed');
    const review = createReview(inv!, attrs, objects).body['request'] as Record<string, unknown>;
    assert.deepEqual(review['kind'], { group: '', version: 'v1', kind: 'Event' });
    assert.deepEqual(review['requestKind'], { group: 'events.k8s.io', version: 'v1', kind: 'Event' });
    assert.deepEqual(review['requestResource'], { group: 'events.k8s.io', version: 'v1', resource: 'events' });
  });

  it('Exact, or no equivalent resources known, calls only webhooks of the request\'s own resource', async () => {
    assert.equal(await shouldCallHook(hook({ rules: [coreRule], matchPolicy: 'Exact' }), eventAttrs(), async () => undefined, equivalents), undefined);
    assert.equal(await shouldCallHook(hook({ rules: [coreRule] }), eventAttrs(), async () => undefined), undefined);
    assert.equal((await shouldCallHook(hook({ rules: [rule({ apiGroups: ['events.k8s.io'] })] }), eventAttrs(), async () => undefined, equivalents))?.resource, groupEvents);
  });
});

describe('AdmissionReview', () => {
  it('requests name the first known version and carry the attributes', () => {
    const req = createAdmissionReview(hook({ admissionReviewVersions: ['v2', 'v1beta1', 'v1'] }), secretAttrs({ dryRun: true, options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', dryRun: ['All'] } }));
    assert.equal(req.version, 'v1beta1');
    assert.equal(req.body['apiVersion'], 'admission.k8s.io/v1beta1');
    const r = req.body['request'] as Record<string, unknown>;
    assert.equal(r['uid'], req.uid);
    assert.deepEqual(r['userInfo'], { username: 'alice', uid: 'u1', groups: ['devs', 'system:authenticated'] });
    assert.equal(r['oldObject'], null);
    assert.equal(r['dryRun'], true);
    assert.equal(r['namespace'], 'ns');
    assert.throws(() => createAdmissionReview(hook({ admissionReviewVersions: ['v2'] }), secretAttrs()), /webhook does not accept known AdmissionReview versions \(v1, v1beta1\)/);
  });

  it('responses are checked as kube checks them', () => {
    const h = hook();
    const req = createAdmissionReview(h, secretAttrs());
    const ok = (response: Record<string, unknown>) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: req.uid, allowed: true, ...response } });
    assert.equal(verifyAdmissionResponse(h, req, false, ok({})).allowed, true);
    const fails = (review: unknown, mutating: boolean, message: string) =>
      assert.throws(() => verifyAdmissionResponse(h, req, mutating, review), (e: unknown) => e instanceof CallingWebhookError && e.message === `failed calling webhook "h.example.com": ${message}`);
    fails({}, false, 'webhook response was absent');
    fails(ok({ uid: 'other' }), false, `expected response.uid="${req.uid}", got "other"`);
    fails({ ...ok({}), apiVersion: 'admission.k8s.io/v1beta1' }, false, 'expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview');
    fails(ok({ patch: 'W10=' }), false, 'validating webhook may not return response.patch');
    fails(ok({ patchType: 'JSONPatch' }), false, 'validating webhook may not return response.patchType');
    fails(ok({ patch: 'W10=' }), true, 'webhook returned response.patch but not response.patchType');
    fails(ok({ patchType: 'JSONPatch' }), true, 'webhook returned response.patchType but not response.patch');
  });

  it('refusals: the webhook\'s message, code (at least 400), reason and details', () => {
    const e = toStatusError('h', { code: 409, reason: 'Conflict', message: 'taken', details: { name: 'x' } });
    assert.deepEqual([e.code, e.reason, e.message, e.details], [409, 'Conflict', 'admission webhook "h" denied the request: taken', { name: 'x' }]);
    assert.deepEqual([toStatusError('h', { code: 200 }).code, toStatusError('h', undefined).message], [400, 'admission webhook "h" denied the request without explanation']);
    assert.equal(toStatusError('h', { reason: 'Because' }).message, 'admission webhook "h" denied the request: Because');
  });

  it('dry-run reaches only webhooks without side effects (400 otherwise)', () => {
    checkDryRun(hook({ sideEffects: 'NoneOnDryRun' }), secretAttrs({ dryRun: true }));
    checkDryRun(hook({ sideEffects: 'Some' }), secretAttrs());
    assert.throws(
      () => checkDryRun(hook({ sideEffects: 'Some' }), secretAttrs({ dryRun: true })),
      (e: unknown) => e instanceof StatusError && e.code === 400 && e.reason === 'BadRequest' && e.message === 'admission webhook "h.example.com" does not support dry run',
    );
  });

  it('addresses: url path kept, service as <name>.<namespace>.svc', () => {
    assert.equal(webhookURL(hook({ timeoutSeconds: 3 })), 'https://127.0.0.1:1/p?timeout=3s');
    assert.equal(webhookURL(hook({ clientConfig: { url: 'https://h.example.com' } })), 'https://h.example.com/?timeout=10s');
    assert.equal(webhookURL(hook({ clientConfig: { service: { namespace: 'n', name: 's', port: 8443 } } })), 'https://s.n.svc:8443/?timeout=10s');
  });
});

/** A fake transport: answers by webhook name, recording the calls. */
function transport(answers: Record<string, (review: any) => Record<string, unknown>>) {
  const calls: string[] = [];
  const post = async (h: Webhook, review: unknown): Promise<unknown> => {
    calls.push(h.name);
    const r = review as { apiVersion: string; request: { uid: string } };
    return { apiVersion: r.apiVersion, kind: 'AdmissionReview', response: { uid: r.request.uid, ...answers[h.name]!(review) } };
  };
  return { calls, post };
}

const patch = (ops: unknown[]) => ({ allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') });

function configuration(name: string, hooks: Array<Record<string, unknown>>): StoredObject {
  return {
    metadata: { name },
    webhooks: hooks.map((h) => ({
      clientConfig: { url: 'https://127.0.0.1:1/' },
      rules: [rule({})],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
      reinvocationPolicy: 'Never',
      timeoutSeconds: 10,
      ...h,
    })),
  } as StoredObject;
}

describe('mutating plugin', () => {
  it('applies patches in order (configurations by name) and reinvokes IfNeeded webhooks once', async () => {
    const t = transport({
      'first.example.com': (r) => (r.request.object.metadata.labels?.second ? { allowed: true } : patch([{ op: 'add', path: '/metadata/annotations', value: { first: 'seen-once' } }])),
      'second.example.com': () => patch([{ op: 'add', path: '/metadata/labels/second', value: 'yes' }]),
      'never.example.com': () => ({ allowed: true }),
    });
    const plugin = createMutatingWebhookPlugin({
      // b-config sorts after a-config.
      listConfigurations: async () => [
        configuration('b-config', [{ name: 'second.example.com' }]),
        configuration('a-config', [{ name: 'first.example.com', reinvocationPolicy: 'IfNeeded' }, { name: 'never.example.com' }]),
      ],
      getNamespace: async () => undefined,
      post: t.post,
    });
    const attrs = secretAttrs();
    const obj = attrs.object!;
    await plugin.admit!(attrs);
    assert.deepEqual(t.calls, ['first.example.com', 'never.example.com', 'second.example.com', 'first.example.com']);
    assert.equal(attrs.object, obj, 'the object is changed in place');
    assert.deepEqual(obj.metadata.labels, { app: 'web', second: 'yes' });
    assert.deepEqual(obj.metadata.annotations, { first: 'seen-once' });
  });

  it('a patch for a delete, a bad patch type or a denial fail as kube; Ignore fails open', async () => {
    const run = async (answer: Record<string, unknown>, attrs: AdmissionAttributes, failurePolicy = 'Fail') => {
      const t = transport({ 'h.example.com': () => answer });
      const plugin = createMutatingWebhookPlugin({ listConfigurations: async () => [configuration('c', [{ name: 'h.example.com', failurePolicy }])], getNamespace: async () => undefined, post: t.post });
      return plugin.admit!(attrs);
    };
    const del = secretAttrs({ operation: 'DELETE', object: undefined, oldObject: secretAttrs().object });
    await assert.rejects(run(patch([{ op: 'remove', path: '/metadata/labels' }]), del), (e: unknown) =>
      e instanceof StatusError && e.code === 500 && e.message === 'Internal error occurred: admission webhook "h.example.com" attempted to modify the object, which is not supported for this operation');
    const merge = { allowed: true, patchType: 'MergePatch', patch: Buffer.from('[{"op":"add","path":"/x","value":1}]').toString('base64') };
    await assert.rejects(run(merge, secretAttrs()), (e: unknown) => e instanceof StatusError && e.code === 500 && e.message === 'Internal error occurred: failed calling webhook "h.example.com": unsupported patch type "MergePatch"');
    await run(merge, secretAttrs(), 'Ignore');
    await assert.rejects(run({ allowed: false, status: { message: 'no' } }, secretAttrs(), 'Ignore'), (e: unknown) => e instanceof StatusError && e.code === 400);
  });
});

describe('validating plugin', () => {
  it('calls every matching webhook and reports warnings; the first failure wins', async () => {
    const t = transport({
      'a.example.com': () => ({ allowed: true, warnings: ['from a'] }),
      'b.example.com': () => ({ allowed: false, status: { code: 422, message: 'bad' } }),
      'c.example.com': () => ({ allowed: true }),
    });
    const warnings: string[] = [];
    const plugin = createValidatingWebhookPlugin({
      listConfigurations: async () => [configuration('v', [{ name: 'a.example.com' }, { name: 'b.example.com' }, { name: 'c.example.com', rules: [rule({ resources: ['pods'] })] }])],
      getNamespace: async () => undefined,
      post: t.post,
    });
    await assert.rejects(async () => plugin.validate!(secretAttrs({ warn: (w) => warnings.push(w) })), (e: unknown) => e instanceof StatusError && e.code === 422 && e.message === 'admission webhook "b.example.com" denied the request: bad');
    assert.deepEqual(t.calls.sort(), ['a.example.com', 'b.example.com']);
    assert.deepEqual(warnings, ['from a']);
  });
});

describe('webhook call observer (apiserver_admission_webhook_admission_duration_seconds)', () => {
  it("reports each call with kube's type, the operation and whether it made the request fail", async () => {
    const seen: Array<[string, string, string, boolean]> = [];
    const observeCall = (name: string, type: string, operation: string, rejected: boolean, seconds: number): void => {
      assert.ok(seconds >= 0 && seconds < 60);
      seen.push([name, type, operation, rejected]);
    };
    const t = transport({ 'ok.example.com': () => ({ allowed: true }), 'no.example.com': () => ({ allowed: false, status: { message: 'no' } }) });
    const validating = createValidatingWebhookPlugin({ listConfigurations: async () => [configuration('v', [{ name: 'ok.example.com' }, { name: 'no.example.com' }])], getNamespace: async () => undefined, post: t.post, observeCall });
    await assert.rejects(async () => validating.validate!(secretAttrs()));
    const mutating = createMutatingWebhookPlugin({ listConfigurations: async () => [configuration('m', [{ name: 'ok.example.com' }])], getNamespace: async () => undefined, post: t.post, observeCall });
    await mutating.admit!(secretAttrs({ operation: 'UPDATE', oldObject: secretAttrs().object }));
    // A failed call with failurePolicy Ignore does not fail the request: not rejected.
    const down = createMutatingWebhookPlugin({
      listConfigurations: async () => [configuration('d', [{ name: 'down.example.com', failurePolicy: 'Ignore' }])],
      getNamespace: async () => undefined,
      post: async (h) => {
        throw new CallingWebhookError(h.name, 'connection refused');
      },
      observeCall,
    });
    await down.admit!(secretAttrs());
    assert.deepEqual(seen.sort(), [
      ['down.example.com', 'admit', 'CREATE', false],
      ['no.example.com', 'validating', 'CREATE', true],
      ['ok.example.com', 'admit', 'UPDATE', false],
      ['ok.example.com', 'validating', 'CREATE', false],
    ]);
  });
});
