/** int64 fields over protobuf: values above 2^53 encoded and decoded exactly (kube's int64), small ones as numbers. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeProtobuf, encodeProtobuf } from "./codec.js";

test("ObjectMeta int64 fields round-trip exactly above 2^53", () => {
  const cm = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "a", namespace: "default", generation: 9007199254740993n, deletionGracePeriodSeconds: 30 },
    data: { k: "v" },
  };
  const back = decodeProtobuf(encodeProtobuf(cm)) as { metadata: Record<string, unknown> };
  assert.equal(back.metadata["generation"], 9007199254740993n);
  assert.equal(back.metadata["deletionGracePeriodSeconds"], 30);
  const max = decodeProtobuf(encodeProtobuf({ ...cm, metadata: { ...cm.metadata, generation: 9223372036854775807n } })) as { metadata: Record<string, unknown> };
  assert.equal(max.metadata["generation"], 9223372036854775807n);
});

test("a CRD's int64 schema bound and BigInt enum value round-trip exactly", () => {
  const crd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "gauges.numbers.example.com" },
    spec: {
      group: "numbers.example.com",
      scope: "Namespaced",
      names: { plural: "gauges", kind: "Gauge" },
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", maxProperties: 9007199254740993n, enum: [{ a: 9007199254740995n }] } } }],
    },
  };
  const back = decodeProtobuf(encodeProtobuf(crd)) as typeof crd;
  const schema = back.spec.versions[0]!.schema.openAPIV3Schema;
  assert.equal(schema.maxProperties, 9007199254740993n);
  assert.deepEqual(schema.enum, [{ a: 9007199254740995n }]);
});
