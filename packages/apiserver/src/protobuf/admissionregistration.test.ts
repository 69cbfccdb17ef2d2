/** admissionregistration.k8s.io/v1 over protobuf: kube's field numbers, the embedded Rule, pointer fields. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { PROTOBUF_PREFIX, decodeProtobuf, encodeProtobuf } from "./codec.js";

type Json = Record<string, unknown>;

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
function lfield(field: number, body: number[] | string): number[] {
  const bytes = typeof body === "string" ? [...Buffer.from(body, "utf8")] : body;
  return [...tag(field, 2), ...varint(bytes.length), ...bytes];
}
/** runtime.Unknown envelope: typeMeta (apiVersion, kind), raw. */
function wire(apiVersion: string, kind: string, raw: number[]): Buffer {
  return Buffer.from([...PROTOBUF_PREFIX, ...lfield(1, [...lfield(1, apiVersion), ...lfield(2, kind)]), ...lfield(2, raw)]);
}

const config: Json = {
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "MutatingWebhookConfiguration",
  metadata: { name: "m" },
  webhooks: [
    {
      name: "a.example.com",
      clientConfig: { url: "https://h/x", caBundle: Buffer.from("ca").toString("base64") },
      rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["secrets"], scope: "*" }],
      failurePolicy: "Fail",
      matchPolicy: "Equivalent",
      namespaceSelector: {},
      objectSelector: { matchLabels: { a: "b" } },
      sideEffects: "None",
      timeoutSeconds: 10,
      admissionReviewVersions: ["v1"],
      reinvocationPolicy: "Never",
    },
    {
      name: "b.example.com",
      clientConfig: { service: { namespace: "ns", name: "svc", path: "/p", port: 443 } },
      sideEffects: "NoneOnDryRun",
      admissionReviewVersions: ["v1", "v1beta1"],
    },
  ],
};

test("MutatingWebhookConfiguration round trips, the rule's embedded fields included", () => {
  assert.deepEqual(decodeProtobuf(encodeProtobuf(config)), config);
});

test("hand-built bytes decode with kube's field numbers", () => {
  const rule = [...lfield(1, "UPDATE"), ...lfield(2, [...lfield(1, "apps"), ...lfield(2, "v1"), ...lfield(3, "deployments/scale"), ...lfield(4, "Namespaced")])];
  const service = [...lfield(1, "ns"), ...lfield(2, "svc"), ...lfield(3, "/v"), ...vfield(4, 8443)];
  const hook = [
    ...lfield(1, "v.example.com"),
    ...lfield(2, [...lfield(1, service), ...lfield(2, "ca")]),
    ...lfield(3, rule),
    ...lfield(4, "Ignore"),
    ...lfield(6, "None"),
    ...vfield(7, 5),
    ...lfield(8, "v1"),
    ...lfield(9, "Exact"),
    ...lfield(10, [...lfield(1, [...lfield(1, "k"), ...lfield(2, "v")])]),
  ];
  const bytes = wire("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", [...lfield(1, lfield(1, "v")), ...lfield(2, hook)]);
  assert.deepEqual(decodeProtobuf(bytes), {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "v" },
    webhooks: [
      {
        name: "v.example.com",
        clientConfig: { service: { namespace: "ns", name: "svc", path: "/v", port: 8443 }, caBundle: Buffer.from("ca").toString("base64") },
        rules: [{ operations: ["UPDATE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["deployments/scale"], scope: "Namespaced" }],
        failurePolicy: "Ignore",
        sideEffects: "None",
        timeoutSeconds: 5,
        admissionReviewVersions: ["v1"],
        matchPolicy: "Exact",
        objectSelector: { matchLabels: { k: "v" } },
      },
    ],
  });
});
