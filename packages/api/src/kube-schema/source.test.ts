/**
 * The pinned schema source against what it must agree with: the Protobuf field numbers plinth
 * served before it (testdata/plinth-proto-fields.json: every message and field of the hand-trimmed
 * proto files it replaced, dumped with protobufjs), the 68 resources kube-apiserver 1.24 serves
 * (testdata/kube-1.24-resources.json), and the no-prose rule.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { definitionNameOfKind, kubeSchema } from './source.js';
import type { ProtoFieldFacts } from './format.js';

const testdata = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../src/kube-schema/testdata/${name}`, import.meta.url), 'utf8'));

/** Every Protobuf message of the file by name: the definitions' and the wrapper messages. */
function messages(): Map<string, Record<string, ProtoFieldFacts>> {
  const file = kubeSchema();
  const out = new Map<string, Record<string, ProtoFieldFacts>>();
  for (const d of Object.values(file.definitions)) if (d.proto) out.set(d.proto.message, d.proto.fields);
  for (const [name, fields] of Object.entries(file.messages)) out.set(name, fields);
  return out;
}

/** kube's UnsafeGuessKindToResource: the plural of a kind. */
function guessPlural(kind: string): string {
  const k = kind.toLowerCase();
  if (k.endsWith('s')) return `${k}es`;
  if (k.endsWith('y')) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

describe('the schema source (packages/api/schema)', () => {
  it('names its inputs: kube 1.24.17 modules by tag, commit and content hash', () => {
    const { source } = kubeSchema();
    assert.equal(source.kubernetes, '1.24.17');
    const modules = source.inputs.filter((i) => i.tag === 'kubernetes-1.24.17').map((i) => i.module);
    assert.deepEqual(modules, ['k8s.io/api', 'k8s.io/apimachinery', 'k8s.io/apiextensions-apiserver', 'k8s.io/kube-aggregator']);
    for (const i of source.inputs) {
      assert.match(i.commit, /^[0-9a-f]{40}$/);
      assert.match(i.sha256, /^[0-9a-f]{64}$/);
    }
    // The one newer addition is named type by type.
    const newer = source.inputs.filter((i) => i.tag !== 'kubernetes-1.24.17');
    assert.deepEqual(newer.map((i) => i.types), [['SelfSubjectReview', 'SelfSubjectReviewStatus']]);
  });

  it("has every Protobuf message and field number plinth served, with the same types", () => {
    const old = testdata('plinth-proto-fields.json') as Record<string, Record<string, [number, string, string]>>;
    const now = messages();
    let fields = 0;
    for (const [message, oldFields] of Object.entries(old)) {
      const m = now.get(message);
      assert.ok(m, `message ${message}`);
      for (const [name, [id, type, label]] of Object.entries(oldFields)) {
        // plinth had renamed two fields to their JSON names (Webhooks, uID): numbers are what count.
        const f: [string, ProtoFieldFacts] | undefined = Object.entries(m).find(([, x]) => x.id === id);
        assert.ok(f, `${message}.${name} = ${id}`);
        assert.equal(f[0].toLowerCase(), name.toLowerCase(), `${message} field ${id}`);
        assert.equal(f[1].type, type, `${message}.${name} type`);
        const rule: string = f[1].keyType ? `map<${f[1].keyType}>` : f[1].rule === 'repeated' ? 'repeated' : 'optional';
        assert.equal(rule, label, `${message}.${name} label`);
        fields++;
      }
    }
    assert.ok(fields > 490, `${fields} fields compared`);
  });

  it("resolves the kind of each of kube 1.24's 68 resources to a definition with a Protobuf message", () => {
    const resources = testdata('kube-1.24-resources.json') as Array<{ gv: string; resource: string }>;
    assert.equal(resources.length, 68);
    const file = kubeSchema();
    for (const r of resources) {
      const [group, version] = r.gv.includes('/') ? r.gv.split('/') as [string, string] : ['', r.gv];
      const kinds = Object.values(file.definitions).flatMap((d) => (d.gvk ?? []).filter((g) => g.group === group && g.version === version));
      const kind = kinds.find((g) => guessPlural(g.kind) === r.resource || g.kind.toLowerCase() === r.resource);
      assert.ok(kind, `${r.gv} ${r.resource}: no kind`);
      const name = definitionNameOfKind(kind);
      assert.ok(name && file.definitions[name]?.proto, `${r.gv} ${kind.kind}: no definition with a message`);
    }
  });

  it('holds the defaults kube declares and the values kube-openapi enforces', () => {
    const field = (def: string, name: string): unknown => file().definitions[def]!.fields!.find((f) => f.name === name)!.schema.default;
    const file = kubeSchema;
    assert.equal(field('io.k8s.api.core.v1.ContainerPort', 'protocol'), 'TCP');
    assert.equal(field('io.k8s.api.core.v1.ServicePort', 'protocol'), 'TCP');
    assert.equal(field('io.k8s.api.core.v1.GRPCAction', 'service'), '');
    assert.deepEqual(field('io.k8s.api.coordination.v1.Lease', 'metadata'), {});
    assert.equal(field('io.k8s.api.core.v1.ContainerPort', 'containerPort'), 0);
    assert.equal(field('io.k8s.api.core.v1.ContainerPort', 'hostPort'), undefined);
  });

  it('carries no prose: no text with a space anywhere in it', () => {
    const strings: string[] = [];
    const walk = (v: unknown): void => {
      if (typeof v === 'string') strings.push(v);
      else if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) (strings.push(k), walk(x));
    };
    walk(kubeSchema());
    assert.ok(strings.length > 10_000);
    assert.deepEqual(strings.filter((s) => /\s/.test(s)), []);
  });
});
