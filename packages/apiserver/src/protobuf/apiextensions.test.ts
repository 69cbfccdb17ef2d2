/**
 * apiextensions.k8s.io/v1 CustomResourceDefinition over protobuf: kube's field numbers, the JSON
 * names of JSONSchemaProps ($ref, x-kubernetes-*), and the bare-value wrapper types (JSON,
 * JSONSchemaPropsOrArray/OrBool/OrStringArray). Custom resources themselves have no protobuf form.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { PROTOBUF_PREFIX, ProtobufDecodeError, decodeProtobuf, encodeProtobuf, protoTypeFor, servesProtobuf } from "./codec.js";

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}
const tag = (field: number, wire: number): number[] => varint(field * 8 + wire);
const vfield = (field: number, n: number): number[] => [...tag(field, 0), ...varint(n)];
function lfield(field: number, body: number[] | string | Buffer): number[] {
  const bytes = typeof body === "string" ? [...Buffer.from(body, "utf8")] : [...body];
  return [...tag(field, 2), ...varint(bytes.length), ...bytes];
}
function dfield(field: number, x: number): number[] {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(x, 0);
  return [...tag(field, 1), ...b];
}
const entry = (field: number, key: string, value: number[]): number[] => lfield(field, [...lfield(1, key), ...lfield(2, value)]);
const API = "apiextensions.k8s.io/v1";
function wire(kind: string, raw: number[]): Buffer {
  return Buffer.from([...PROTOBUF_PREFIX, ...lfield(1, [...lfield(1, API), ...lfield(2, kind)]), ...lfield(2, raw), ...lfield(3, ""), ...lfield(4, "")]);
}

const schema = {
  type: "object",
  description: "a widget",
  required: ["spec"],
  properties: {
    spec: {
      type: "object",
      properties: {
        size: { type: "integer", minimum: 0, maximum: 100, default: 3, exclusiveMaximum: true, multipleOf: 0.5 },
        color: { type: "string", enum: ["red", "blue", null], default: "blue", pattern: "^[a-z]+$", maxLength: 10, minLength: 0 },
        port: { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] },
        labels: { type: "object", additionalProperties: { type: "string" }, maxProperties: 5, "x-kubernetes-map-type": "granular" },
        open: { type: "object", additionalProperties: true },
        closed: { type: "object", additionalProperties: false, nullable: true },
        raw: { type: "object", "x-kubernetes-preserve-unknown-fields": true, example: { a: [1, "b", { c: null }] } },
        keep: { type: "object", "x-kubernetes-preserve-unknown-fields": false },
        embedded: { type: "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true },
        ports: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name", "protocol"],
          maxItems: 8,
          minItems: 0,
          uniqueItems: true,
          items: {
            type: "object",
            required: ["name"],
            properties: { name: { type: "string", format: "hostname" }, protocol: { type: "string", default: "TCP" } },
          },
        },
        tags: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" },
        limits: { type: "object", "x-kubernetes-validations": [{ rule: "self.min <= self.max", message: "min above max" }, { rule: "has(self.min)" }] },
        tuple: { type: "array", items: [{ type: "string" }, { type: "integer" }], additionalItems: false },
        ref: { $ref: "#/definitions/thing", $schema: "http://json-schema.org/draft-04/schema#", id: "ref-id", title: "Ref" },
        extra: {
          not: { type: "string" },
          oneOf: [{ required: ["a"] }],
          allOf: [{ minProperties: 1 }],
          patternProperties: { "^x-": { type: "string" } },
          dependencies: { a: ["b", "c"], d: { required: ["e"] } },
          definitions: { thing: { type: "boolean" } },
          externalDocs: { description: "docs", url: "https://example.com" },
          exclusiveMinimum: true,
        },
      },
    },
    status: { type: "object", properties: { replicas: { type: "integer" }, selector: { type: "string" } } },
  },
};

const crd = {
  apiVersion: API,
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com", uid: "u-1", resourceVersion: "12", generation: 2, creationTimestamp: "2026-01-02T03:04:05Z" },
  spec: {
    group: "example.com",
    names: { plural: "widgets", singular: "widget", shortNames: ["wd"], kind: "Widget", listKind: "WidgetList", categories: ["all"] },
    scope: "Namespaced",
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: { openAPIV3Schema: schema },
        subresources: { status: {}, scale: { specReplicasPath: ".spec.size", statusReplicasPath: ".status.replicas", labelSelectorPath: ".status.selector" } },
        additionalPrinterColumns: [
          { name: "Size", type: "integer", jsonPath: ".spec.size", description: "how big", priority: 1, format: "int32" },
          { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
        ],
      },
      { name: "v1beta1", served: false, storage: false, deprecated: true, deprecationWarning: "", schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } },
    ],
    conversion: { strategy: "None" },
  },
  status: {
    conditions: [
      { type: "NamesAccepted", status: "True", lastTransitionTime: "2026-01-02T03:04:05Z", reason: "NoConflicts", message: "no conflicts found" },
      { type: "Established", status: "True", lastTransitionTime: "2026-01-02T03:04:06Z", reason: "InitialNamesAccepted", message: "the initial names have been accepted" },
    ],
    acceptedNames: { plural: "widgets", singular: "widget", shortNames: ["wd"], kind: "Widget", listKind: "WidgetList", categories: ["all"] },
    storedVersions: ["v1"],
  },
};

test("CustomResourceDefinition and apiextensions.k8s.io/v1 have a protobuf form; custom resources do not", () => {
  assert.equal(protoTypeFor(API, "CustomResourceDefinition"), "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition");
  assert.equal(protoTypeFor(API, "CustomResourceDefinitionList"), "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionList");
  assert.equal(protoTypeFor(API, "DeleteOptions"), "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions");
  assert.equal(protoTypeFor(API, "JSONSchemaProps"), undefined, "not a kind");
  assert.equal(servesProtobuf({ group: "apiextensions.k8s.io", version: "v1", kind: "CustomResourceDefinition" }), true);
  assert.equal(servesProtobuf({ group: "example.com", version: "v1", kind: "Widget" }), false);
  assert.equal(servesProtobuf({ group: "widgets.k8s.io", version: "v1", kind: "Widget" }), false);
});

test("a CRD with a rich schema round trips JSON → protobuf → JSON unchanged", () => {
  assert.deepEqual(decodeProtobuf(encodeProtobuf(crd)), crd);
});

test("a CustomResourceDefinitionList round trips with items at field 2", () => {
  const { apiVersion: _a, kind: _k, ...item } = crd;
  const list = { apiVersion: API, kind: "CustomResourceDefinitionList", metadata: { resourceVersion: "40" }, items: [item, item] };
  assert.deepEqual(decodeProtobuf(encodeProtobuf(list)), list);
  const empty = { apiVersion: API, kind: "CustomResourceDefinitionList", metadata: { resourceVersion: "41" }, items: [] };
  assert.deepEqual(decodeProtobuf(encodeProtobuf(empty)), empty);
});

// kube's numbers: CRD metadata 1, spec 2, status 3; spec group 1, names 3, scope 4, versions 7,
// conversion 9; names plural 1, singular 2, kind 4, listKind 5; version name 1, served 2,
// storage 3, schema 4 (openAPIV3Schema 1); JSONSchemaProps type 5, maximum 9 (double), enum 20
// (JSON raw 1), items 24 (schema 1), properties 29 (map), additionalProperties 30 (allows 1,
// schema 2), default 8, x-kubernetes-preserve-unknown-fields 38, list-map-keys 41, list-type 42;
// status acceptedNames 2, storedVersions 3.
const small = {
  apiVersion: API,
  kind: "CustomResourceDefinition",
  metadata: { name: "gadgets.example.com" },
  spec: {
    group: "example.com",
    names: { plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" },
    scope: "Cluster",
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                properties: {
                  level: { type: "number", maximum: 2.5, enum: [1, "two"] },
                  list: {
                    type: "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["k"],
                    items: { type: "object", default: { k: "a" } },
                  },
                  map: { type: "object", additionalProperties: { type: "string" } },
                  free: { type: "object", additionalProperties: true, "x-kubernetes-preserve-unknown-fields": true },
                },
              },
            },
          },
        },
      },
    ],
    conversion: { strategy: "None" },
  },
  // conditions' json tag has no omitempty: a CRD without any decodes with an empty list.
  status: { conditions: [], acceptedNames: { plural: "gadgets", kind: "Gadget" }, storedVersions: ["v1"] },
};

function smallRaw(): number[] {
  const str = (t: string): number[] => lfield(5, t);
  const level = [...str("number"), ...dfield(9, 2.5), ...lfield(20, lfield(1, "1")), ...lfield(20, lfield(1, '"two"'))];
  const list = [
    ...str("array"),
    ...lfield(24, lfield(1, [...str("object"), ...lfield(8, lfield(1, '{"k":"a"}'))])),
    ...lfield(41, "k"),
    ...lfield(42, "map"),
  ];
  const map = [...str("object"), ...lfield(30, [...vfield(1, 1), ...lfield(2, str("string"))])];
  const free = [...str("object"), ...lfield(30, vfield(1, 1)), ...vfield(38, 1)];
  // gogo writes map entries sorted by key: free, level, list, map.
  const spec = [...str("object"), ...entry(29, "free", free), ...entry(29, "level", level), ...entry(29, "list", list), ...entry(29, "map", map)];
  const root = [...str("object"), ...entry(29, "spec", spec)];
  const version = [...lfield(1, "v1"), ...vfield(2, 1), ...vfield(3, 1), ...lfield(4, lfield(1, root))];
  const names = [...lfield(1, "gadgets"), ...lfield(2, "gadget"), ...lfield(4, "Gadget"), ...lfield(5, "GadgetList")];
  const specMsg = [...lfield(1, "example.com"), ...lfield(3, names), ...lfield(4, "Cluster"), ...lfield(7, version), ...lfield(9, lfield(1, "None"))];
  const status = [...lfield(2, [...lfield(1, "gadgets"), ...lfield(4, "Gadget")]), ...lfield(3, "v1")];
  return [...lfield(1, lfield(1, "gadgets.example.com")), ...lfield(2, specMsg), ...lfield(3, status)];
}

test("CRD bytes use kube's field numbers; hand-built bytes decode to the CRD", () => {
  const bytes = wire("CustomResourceDefinition", smallRaw());
  assert.deepEqual(decodeProtobuf(bytes), small);
  assert.deepEqual(encodeProtobuf(small), bytes);
});

test("JSONSchemaProps: $schema 2, $ref 3, id 1, not 28, x-kubernetes-embedded-resource 39, int-or-string 40, map-type 43, validations 44", () => {
  const props = {
    id: "i",
    $schema: "s",
    $ref: "r",
    not: { type: "string" },
    "x-kubernetes-embedded-resource": true,
    "x-kubernetes-int-or-string": true,
    "x-kubernetes-map-type": "atomic",
    "x-kubernetes-validations": [{ rule: "self.a > 0", message: "a" }],
  };
  const obj = { ...small, spec: { ...small.spec, versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: props } }] } };
  const schemaBytes = [
    ...lfield(1, "i"),
    ...lfield(2, "s"),
    ...lfield(3, "r"),
    ...lfield(28, lfield(5, "string")),
    ...vfield(39, 1),
    ...vfield(40, 1),
    ...lfield(43, "atomic"),
    ...lfield(44, [...lfield(1, "self.a > 0"), ...lfield(2, "a")]),
  ];
  const encoded = encodeProtobuf(obj);
  assert.ok(encoded.includes(Buffer.from(lfield(4, lfield(1, schemaBytes)))), "the schema's bytes");
  assert.deepEqual(decodeProtobuf(encoded), obj);
});

test("items as an array (jSONSchemas 2), additionalItems, dependencies (property 2 / schema 1) and null enum items", () => {
  const props = {
    type: "array",
    items: [{ type: "string" }, { type: "integer" }],
    additionalItems: { type: "boolean" },
    dependencies: { a: ["b"], c: { required: ["d"] } },
    enum: [null, { x: 1 }],
  };
  const obj = { ...small, spec: { ...small.spec, versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: props } }] } };
  const schemaBytes = [
    ...lfield(5, "array"),
    ...lfield(20, []), // a JSON null is an empty raw
    ...lfield(20, lfield(1, '{"x":1}')),
    ...lfield(24, [...lfield(2, lfield(5, "string")), ...lfield(2, lfield(5, "integer"))]),
    ...entry(32, "a", lfield(2, "b")),
    ...entry(32, "c", lfield(1, lfield(23, "d"))),
    ...lfield(33, [...vfield(1, 1), ...lfield(2, lfield(5, "boolean"))]),
  ];
  const encoded = encodeProtobuf(obj);
  assert.ok(encoded.includes(Buffer.from(lfield(4, lfield(1, schemaBytes)))), "the schema's bytes");
  assert.deepEqual(decodeProtobuf(encoded), obj);
});

test("additionalProperties false is allows=0 without a schema and stays false", () => {
  const props = { type: "object", additionalProperties: false };
  const obj = { ...small, spec: { ...small.spec, versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: props } }] } };
  const encoded = encodeProtobuf(obj);
  assert.ok(encoded.includes(Buffer.from(lfield(4, lfield(1, [...lfield(5, "object"), ...lfield(30, vfield(1, 0))])))));
  assert.deepEqual(decodeProtobuf(encoded), obj);
});

test("a conversion webhook: clientConfig 2 (service 1 with path and port, caBundle 2, url 3), conversionReviewVersions 3", () => {
  const conversion = {
    strategy: "Webhook",
    webhook: {
      clientConfig: { service: { namespace: "ns", name: "conv", path: "/convert", port: 8443 }, caBundle: Buffer.from("pem").toString("base64") },
      conversionReviewVersions: ["v1", "v1beta1"],
    },
  };
  const obj = { ...small, spec: { ...small.spec, conversion } };
  const encoded = encodeProtobuf(obj);
  const bytes = lfield(9, [
    ...lfield(1, "Webhook"),
    ...lfield(2, [
      ...lfield(2, [...lfield(1, [...lfield(1, "ns"), ...lfield(2, "conv"), ...lfield(3, "/convert"), ...vfield(4, 8443)]), ...lfield(2, "pem")]),
      ...lfield(3, "v1"),
      ...lfield(3, "v1beta1"),
    ]),
  ]);
  assert.ok(encoded.includes(Buffer.from(bytes)));
  assert.deepEqual(decodeProtobuf(encoded), obj);
  const byUrl = { ...small, spec: { ...small.spec, conversion: { strategy: "Webhook", webhook: { clientConfig: { url: "https://conv.example.com/c" }, conversionReviewVersions: ["v1"] } } } };
  assert.deepEqual(decodeProtobuf(encodeProtobuf(byUrl)), byUrl);
});

test("a JSON raw that is not JSON is a decode error, not garbage", () => {
  const bad = smallRaw();
  const raw = Buffer.from(bad);
  const at = raw.indexOf(Buffer.from('{"k":"a"}'));
  assert.ok(at > 0);
  raw[at] = "}".charCodeAt(0);
  assert.throws(() => decodeProtobuf(wire("CustomResourceDefinition", [...raw])), ProtobufDecodeError);
});

test("a schema whose items nest 60 deep (120 message levels, within plinth's JSON depth) encodes and round trips", () => {
  let props: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < 60; i++) props = { type: "array", items: props, additionalProperties: i === 0 ? { type: "string" } : undefined };
  props = JSON.parse(JSON.stringify(props)) as Record<string, unknown>;
  const obj = { ...small, spec: { ...small.spec, versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: props } }] } };
  assert.deepEqual(decodeProtobuf(encodeProtobuf(obj)), obj);
});
