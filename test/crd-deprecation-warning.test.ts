/**
 * The default deprecation warning of a custom resource version, as kube's apiextensions-apiserver
 * words it (defaultDeprecationWarning): `<group>/<version> <Kind> is deprecated`, followed by
 * `; use <group>/<newer> <Kind>` when a served, non-deprecated version of higher kube-aware
 * priority exists (the highest such version is named).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, usePlinth } from './harness.js';
import { expectCode } from './assertions.js';

const env = usePlinth();
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } };

interface V {
  name: string;
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
}

function crd(plural: string, kind: string, versions: V[]): object {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.warn.example.com` },
    spec: {
      group: 'warn.example.com',
      scope: 'Namespaced',
      names: { plural, kind },
      versions: versions.map((v) => ({ served: true, storage: false, schema, ...v })),
    },
  };
}

async function install(body: object, plural: string, version: string): Promise<void> {
  expectCode(await env.plinth.client.post(CRDS, body), 201);
  await eventually(async () => (await env.plinth.client.get(`/apis/warn.example.com/${version}/namespaces/default/${plural}`)).status === 200, 15_000, `${plural} served`);
}

async function warningOf(plural: string, version: string): Promise<string | undefined> {
  const res = await env.plinth.client.get(`/apis/warn.example.com/${version}/namespaces/default/${plural}`);
  expectCode(res, 200);
  const w = res.headers['warning'];
  return Array.isArray(w) ? w.join(', ') : w;
}

describe('default CRD deprecation warning', () => {
  it('names the highest served, non-deprecated version of higher priority', async () => {
    await install(
      crd('gears', 'Gear', [
        { name: 'v1', storage: true },
        { name: 'v2' },
        // Not served: never recommended, however high.
        { name: 'v3', served: false },
        // Alpha ranks below beta and GA.
        { name: 'v4alpha1' },
        { name: 'v1beta1', deprecated: true },
        { name: 'v1alpha1', deprecated: true },
        { name: 'v2beta1', deprecated: true, deprecationWarning: 'gears v2beta1 goes away soon' },
      ]),
      'gears',
      'v1',
    );
    assert.equal(await warningOf('gears', 'v1beta1'), '299 - "warn.example.com/v1beta1 Gear is deprecated; use warn.example.com/v2 Gear"');
    assert.equal(await warningOf('gears', 'v1alpha1'), '299 - "warn.example.com/v1alpha1 Gear is deprecated; use warn.example.com/v2 Gear"');
    // A warning of the CRD's own is sent as written.
    assert.equal(await warningOf('gears', 'v2beta1'), '299 - "gears v2beta1 goes away soon"');
    assert.equal(await warningOf('gears', 'v2'), undefined);
  });

  it('has no suffix when no served, non-deprecated version ranks higher', async () => {
    await install(
      crd('cogs', 'Cog', [
        // Deprecated GA: beta and alpha versions rank lower, a deprecated v2 does not count.
        { name: 'v1', storage: true, deprecated: true },
        { name: 'v2', deprecated: true },
        { name: 'v2beta1' },
        { name: 'v3alpha1' },
      ]),
      'cogs',
      'v1',
    );
    assert.equal(await warningOf('cogs', 'v1'), '299 - "warn.example.com/v1 Cog is deprecated"');
    assert.equal(await warningOf('cogs', 'v2'), '299 - "warn.example.com/v2 Cog is deprecated"');
  });

  it('ranks versions that are not kube-like below kube-like ones', async () => {
    await install(crd('bolts', 'Bolt', [{ name: 'foo1', storage: true, deprecated: true }, { name: 'v1alpha1' }, { name: 'foo10' }]), 'bolts', 'foo1');
    // Any kube-like version outranks foo1; of non-kube-like ones, foo1 ranks above foo10.
    assert.equal(await warningOf('bolts', 'foo1'), '299 - "warn.example.com/foo1 Bolt is deprecated; use warn.example.com/v1alpha1 Bolt"');
  });
});
