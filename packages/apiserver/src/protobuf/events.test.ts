/** Events over protobuf: core/v1 and events.k8s.io/v1, v1beta1 with kube's field numbers; MicroTime as seconds + nanos. */
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
function wire(apiVersion: string, kind: string, raw: number[]): Buffer {
  return Buffer.from([...PROTOBUF_PREFIX, ...lfield(1, [...lfield(1, apiVersion), ...lfield(2, kind)]), ...lfield(2, raw)]);
}

const core: Json = {
  apiVersion: "v1",
  kind: "Event",
  metadata: { name: "e", namespace: "default" },
  involvedObject: { kind: "Pod", namespace: "default", name: "p", uid: "u1", apiVersion: "v1", fieldPath: "spec.containers{c}" },
  reason: "Started",
  message: "started",
  source: { component: "kubelet", host: "node-1" },
  firstTimestamp: "2022-05-01T10:00:00Z",
  lastTimestamp: "2022-05-01T10:05:00Z",
  count: 3,
  type: "Normal",
  eventTime: "2022-05-01T10:00:00.123456Z",
  series: { count: 2, lastObservedTime: "2022-05-01T10:05:00.000001Z" },
  action: "Start",
  related: { kind: "Node", name: "node-1" },
  reportingComponent: "kubelet",
  reportingInstance: "node-1",
};

test("core/v1 Event round trips, MicroTime keeping its microseconds", () => {
  assert.deepEqual(decodeProtobuf(encodeProtobuf(core)), core);
});

test("core/v1 Event: reportingComponent and reportingInstance are always in the JSON form", () => {
  const bytes = wire("v1", "Event", [...lfield(1, lfield(1, "e")), ...lfield(2, [])]);
  assert.deepEqual(decodeProtobuf(bytes), {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: "e" },
    involvedObject: {},
    reportingComponent: "",
    reportingInstance: "",
  });
});

for (const version of ["v1", "v1beta1"]) {
  const ev: Json = {
    apiVersion: `events.k8s.io/${version}`,
    kind: "Event",
    metadata: { name: "e", namespace: "default" },
    eventTime: "2022-05-01T10:00:00.123456Z",
    series: { count: 2, lastObservedTime: "2022-05-01T10:05:00.000001Z" },
    reportingController: "example.com/ctl",
    reportingInstance: "ctl-1",
    action: "Reconcile",
    reason: "Synced",
    regarding: { kind: "Pod", namespace: "default", name: "p" },
    related: { kind: "Node", name: "n" },
    note: "synced",
    type: "Warning",
    deprecatedSource: { component: "c", host: "h" },
    deprecatedFirstTimestamp: "2022-05-01T10:00:00Z",
    deprecatedLastTimestamp: "2022-05-01T10:05:00Z",
    deprecatedCount: 4,
  };

  test(`events.k8s.io/${version} Event round trips`, () => {
    assert.deepEqual(decodeProtobuf(encodeProtobuf(ev)), ev);
  });

  test(`events.k8s.io/${version} Event: hand-built bytes decode with kube's field numbers`, () => {
    // MicroTime{seconds=1651399200, nanos=123456000}
    const micro = [...vfield(1, 1651399200), ...vfield(2, 123456000)];
    const raw = [
      ...lfield(1, [...lfield(1, "e"), ...lfield(3, "ns")]),
      ...lfield(2, micro),
      ...lfield(3, [...vfield(1, 5), ...lfield(2, micro)]),
      ...lfield(4, "ctl"),
      ...lfield(5, "i"),
      ...lfield(6, "A"),
      ...lfield(7, "R"),
      ...lfield(8, [...lfield(1, "Pod"), ...lfield(3, "p")]),
      ...lfield(10, "note"),
      ...lfield(11, "Normal"),
      ...lfield(12, [...lfield(1, "comp")]),
      ...lfield(13, vfield(1, 1651399200)),
      ...vfield(15, 7),
    ];
    assert.deepEqual(decodeProtobuf(wire(`events.k8s.io/${version}`, "Event", raw)), {
      apiVersion: `events.k8s.io/${version}`,
      kind: "Event",
      metadata: { name: "e", namespace: "ns" },
      eventTime: "2022-05-01T10:00:00.123456Z",
      series: { count: 5, lastObservedTime: "2022-05-01T10:00:00.123456Z" },
      reportingController: "ctl",
      reportingInstance: "i",
      action: "A",
      reason: "R",
      regarding: { kind: "Pod", name: "p" },
      note: "note",
      type: "Normal",
      deprecatedSource: { component: "comp" },
      deprecatedFirstTimestamp: "2022-05-01T10:00:00Z",
      deprecatedCount: 7,
    });
  });
}
