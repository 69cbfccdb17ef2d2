/** core/v1 ConfigMap and coordination.k8s.io/v1 Lease over protobuf: kube's field numbers, MicroTime, pointers. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { PROTOBUF_PREFIX, decodeProtobuf, encodeProtobuf } from "./codec.js";

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
const entry = (field: number, key: string, value: string | Buffer): number[] => lfield(field, [...lfield(1, key), ...lfield(2, value)]);
/** runtime.Unknown envelope as kube writes it: typeMeta, raw, and the two empty strings. */
function wire(apiVersion: string, kind: string, raw: number[]): Buffer {
  return Buffer.from([...PROTOBUF_PREFIX, ...lfield(1, [...lfield(1, apiVersion), ...lfield(2, kind)]), ...lfield(2, raw), ...lfield(3, ""), ...lfield(4, "")]);
}
/** The Lease's raw message within an envelope (after the prefix and Unknown's typeMeta). */
function rawOf(envelope: Buffer, apiVersion: string, kind: string): Buffer {
  const head = Buffer.from([...PROTOBUF_PREFIX, ...lfield(1, [...lfield(1, apiVersion), ...lfield(2, kind)])]);
  assert.deepEqual(envelope.subarray(0, head.length), head);
  let i = head.length + 1; // tag of raw
  let len = 0;
  let shift = 0;
  for (;;) {
    const b = envelope[i++]!;
    len += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) break;
  }
  return envelope.subarray(i, i + len);
}

const configMap = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "c", namespace: "ns" },
  immutable: false,
  data: { b: "2", a: "1" },
  binaryData: { bin: Buffer.from([0, 255, 1]).toString("base64") },
};

test("ConfigMap round trips; immutable: false survives (a *bool)", () => {
  assert.deepEqual(decodeProtobuf(encodeProtobuf(configMap)), configMap);
});

test("ConfigMap bytes: metadata 1, data 2 (sorted entries), binaryData 3, immutable 4", () => {
  const bytes = wire("v1", "ConfigMap", [
    ...lfield(1, [...lfield(1, "c"), ...lfield(3, "ns")]),
    ...entry(2, "a", "1"),
    ...entry(2, "b", "2"),
    ...entry(3, "bin", Buffer.from([0, 255, 1])),
    ...vfield(4, 0),
  ]);
  assert.deepEqual(encodeProtobuf(configMap), bytes);
  assert.deepEqual(decodeProtobuf(bytes), { ...configMap, data: { a: "1", b: "2" } });
});

test("ConfigMapList carries items at field 2", () => {
  const list = { apiVersion: "v1", kind: "ConfigMapList", metadata: { resourceVersion: "7" }, items: [{ metadata: { name: "c" }, data: { k: "v" } }] };
  assert.deepEqual(decodeProtobuf(encodeProtobuf(list)), list);
});

const lease = {
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name: "l", namespace: "ns" },
  spec: {
    holderIdentity: "node-a",
    leaseDurationSeconds: 15,
    acquireTime: "2026-01-02T03:04:05.123456Z",
    renewTime: "2026-01-02T03:04:06.000000Z",
    leaseTransitions: 0,
  },
};

test("Lease round trips with MicroTime to the microsecond; zero pointers survive", () => {
  assert.deepEqual(decodeProtobuf(encodeProtobuf(lease)), lease);
  const empty = { ...lease, spec: { holderIdentity: "" } };
  assert.deepEqual(decodeProtobuf(encodeProtobuf(empty)), empty);
});

test("Lease bytes: spec 2 with holderIdentity 1, leaseDurationSeconds 2, acquireTime 3, renewTime 4 (seconds 1, nanos 2), leaseTransitions 5", () => {
  const acquire = Date.parse("2026-01-02T03:04:05Z") / 1000;
  const spec = [
    ...lfield(1, "node-a"),
    ...vfield(2, 15),
    ...lfield(3, [...vfield(1, acquire), ...vfield(2, 123456000)]),
    // kube's Timestamp marshals nanos even when 0
    ...lfield(4, [...vfield(1, acquire + 1), ...vfield(2, 0)]),
    ...vfield(5, 0),
  ];
  const raw = [...lfield(1, [...lfield(1, "l"), ...lfield(3, "ns")]), ...lfield(2, spec)];
  assert.deepEqual(rawOf(encodeProtobuf(lease), "coordination.k8s.io/v1", "Lease"), Buffer.from(raw));
  assert.deepEqual(decodeProtobuf(wire("coordination.k8s.io/v1", "Lease", raw)), lease);
});

test("a MicroTime with nanoseconds from another client is truncated to microseconds, as kube does", () => {
  const t = Date.parse("2026-01-02T03:04:05Z") / 1000;
  const raw = [...lfield(2, lfield(4, [...vfield(1, t), ...vfield(2, 987654321)]))];
  assert.deepEqual(decodeProtobuf(wire("coordination.k8s.io/v1", "Lease", raw)), {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    spec: { renewTime: "2026-01-02T03:04:05.987654Z" },
  });
});
