import assert from "node:assert/strict";
import { test } from "node:test";
import protobuf from "protobufjs";
import { jsonToProtoObject, protoObjectToJson } from "./convert.js";
import { protoRoot } from "./loader.js";
import {
  PROTOBUF_PREFIX,
  ProtobufDecodeError,
  ProtobufUnsupportedError,
  decodeProtobuf,
  decodeWatchEventFrames,
  encodeProtobuf,
  encodeWatchEventFrame,
  protoTypeFor,
} from "./codec.js";

type Json = Record<string, unknown>;

function roundTrip(obj: Json): Json {
  const bytes = encodeProtobuf(obj);
  assert.deepEqual([...bytes.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
  return decodeProtobuf(bytes);
}

const b64 = (s: string | Uint8Array): string => Buffer.from(s).toString("base64");

// --- hand-rolled protobuf writer, independent of the .proto files -----------------------------
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

test("protoTypeFor maps served kinds to kube's message names", () => {
  assert.equal(protoTypeFor("v1", "ServiceAccount"), "k8s.io.api.core.v1.ServiceAccount");
  assert.equal(protoTypeFor("v1", "ServiceAccountList"), "k8s.io.api.core.v1.ServiceAccountList");
  assert.equal(protoTypeFor("v1", "Namespace"), "k8s.io.api.core.v1.Namespace");
  assert.equal(protoTypeFor("v1", "Secret"), "k8s.io.api.core.v1.Secret");
  assert.equal(protoTypeFor("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), "k8s.io.api.rbac.v1.ClusterRoleBinding");
  assert.equal(protoTypeFor("rbac.authorization.k8s.io/v1", "RoleList"), "k8s.io.api.rbac.v1.RoleList");
  assert.equal(protoTypeFor("v1", "Status"), "k8s.io.apimachinery.pkg.apis.meta.v1.Status");
  assert.equal(protoTypeFor("v1", "APIResourceList"), "k8s.io.apimachinery.pkg.apis.meta.v1.APIResourceList");
  assert.equal(protoTypeFor("v1", "APIVersions"), "k8s.io.apimachinery.pkg.apis.meta.v1.APIVersions");
  assert.equal(protoTypeFor("v1", "APIGroupList"), "k8s.io.apimachinery.pkg.apis.meta.v1.APIGroupList");
  assert.equal(protoTypeFor("v1", "WatchEvent"), "k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent");
  assert.equal(protoTypeFor("v1", "DeleteOptions"), "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions");
  assert.equal(protoTypeFor("meta.k8s.io/v1", "DeleteOptions"), "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions");
  assert.equal(protoTypeFor("rbac.authorization.k8s.io/v1", "DeleteOptions"), "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions");
  assert.equal(protoTypeFor("meta.k8s.io/v1", "PartialObjectMetadataList"), "k8s.io.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList");
  // kube's metav1.Table is +protobuf=false: no protobuf form exists.
  assert.equal(protoTypeFor("meta.k8s.io/v1", "Table"), undefined);
  assert.equal(protoTypeFor("v1", "NamespaceSpec"), undefined);
  // Every kind of kube 1.24 has its message, served yet or not.
  assert.equal(protoTypeFor("v1", "Pod"), "k8s.io.api.core.v1.Pod");
  assert.equal(protoTypeFor("apps/v1", "Deployment"), "k8s.io.api.apps.v1.Deployment");
  assert.equal(protoTypeFor("example.com/v1", "DeleteOptions"), undefined);
  assert.equal(protoTypeFor("example.com/v1", "Widget"), undefined);
});

test("ServiceAccount round trip (secrets, labels, annotations, managedFields, timestamps)", () => {
  const sa: Json = {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: {
      name: "builder",
      namespace: "ci",
      uid: "6f1c2d9e-1111-2222-3333-444455556666",
      resourceVersion: "42",
      generation: 3,
      creationTimestamp: "2026-01-02T03:04:05Z",
      labels: { "app.kubernetes.io/name": "builder", tier: "ci" },
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": '{"a":1}\n' },
      finalizers: ["example.com/keep"],
      ownerReferences: [
        { apiVersion: "v1", kind: "Namespace", name: "ci", uid: "u-1", controller: true, blockOwnerDeletion: false },
      ],
      managedFields: [
        {
          manager: "kubectl-client-side-apply",
          operation: "Update",
          apiVersion: "v1",
          time: "2026-01-02T03:04:05Z",
          fieldsType: "FieldsV1",
          fieldsV1: { "f:metadata": { "f:labels": { ".": {}, "f:tier": {} } }, "f:secrets": {} },
        },
      ],
    },
    secrets: [{ name: "builder-token" }, { kind: "Secret", name: "extra", namespace: "ci" }],
    imagePullSecrets: [{ name: "registry" }],
    automountServiceAccountToken: false,
  };
  assert.deepEqual(roundTrip(sa), sa);
});

test("Namespace round trip (spec.finalizers, status.phase, conditions)", () => {
  const ns: Json = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "team-a", labels: { "kubernetes.io/metadata.name": "team-a" } },
    spec: { finalizers: ["kubernetes"] },
    status: {
      phase: "Terminating",
      conditions: [
        {
          type: "NamespaceDeletionContentFailure",
          status: "False",
          lastTransitionTime: "2026-03-04T05:06:07Z",
          reason: "ContentDeleted",
          message: "All content successfully deleted",
        },
      ],
    },
  };
  assert.deepEqual(roundTrip(ns), ns);
  const active: Json = { apiVersion: "v1", kind: "Namespace", metadata: { name: "x" }, spec: {}, status: { phase: "Active" } };
  assert.deepEqual(roundTrip(active), active);
});

test("Secret round trip (map<string,bytes> ⇄ base64, immutable=false kept)", () => {
  const secret: Json = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "creds", namespace: "default" },
    immutable: false,
    data: { password: b64("s3cr3t"), binary: b64(new Uint8Array([0, 255, 1, 128])), empty: "" },
    type: "Opaque",
  };
  assert.deepEqual(roundTrip(secret), secret);
});

test("ClusterRoleBinding and ClusterRole round trip", () => {
  const crb: Json = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "ci-admin" },
    subjects: [
      { kind: "ServiceAccount", name: "builder", namespace: "ci" },
      { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "alice" },
    ],
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
  };
  assert.deepEqual(roundTrip(crb), crb);

  const cr: Json = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "aggregate" },
    rules: [
      { verbs: ["get", "list"], apiGroups: [""], resources: ["secrets"], resourceNames: ["a"] },
      { verbs: ["get"], nonResourceURLs: ["/healthz"] },
    ],
    aggregationRule: {
      clusterRoleSelectors: [
        { matchLabels: { "rbac.example.com/aggregate": "true" } },
        { matchExpressions: [{ key: "tier", operator: "In", values: ["a", "b"] }] },
      ],
    },
  };
  assert.deepEqual(roundTrip(cr), cr);
  // Go's `json:"rules"` has no omitempty: an empty rule list decodes as [].
  const bare = roundTrip({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "x" } });
  assert.deepEqual(bare, { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "x" }, rules: [] });
});

test("ServiceAccountList round trip with continue/resourceVersion/remainingItemCount", () => {
  const list: Json = {
    apiVersion: "v1",
    kind: "ServiceAccountList",
    metadata: { resourceVersion: "1234", continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ", remainingItemCount: 7 },
    items: [
      { metadata: { name: "a", namespace: "ns" }, secrets: [{ name: "a-token" }] },
      { metadata: { name: "b", namespace: "ns", creationTimestamp: "2025-12-31T23:59:59Z" } },
    ],
  };
  assert.deepEqual(roundTrip(list), list);
  // Empty list: kube always writes "items" (and remainingItemCount=0 is a pointer, so kept).
  const empty = roundTrip({ apiVersion: "v1", kind: "SecretList", metadata: { resourceVersion: "9", remainingItemCount: 0 } });
  assert.deepEqual(empty, { apiVersion: "v1", kind: "SecretList", metadata: { resourceVersion: "9", remainingItemCount: 0 }, items: [] });
});

test("Status with details.causes round trip", () => {
  const status: Json = {
    apiVersion: "v1",
    kind: "Status",
    metadata: {},
    status: "Failure",
    message: 'ServiceAccount "x" is invalid: metadata.name: Invalid value',
    reason: "Invalid",
    details: {
      name: "x",
      kind: "ServiceAccount",
      causes: [
        { reason: "FieldValueInvalid", message: "Invalid value", field: "metadata.name" },
        { reason: "FieldValueRequired", field: "spec" },
      ],
      retryAfterSeconds: 2,
    },
    code: 422,
  };
  assert.deepEqual(roundTrip(status), status);
});

test("DeleteOptions keeps pointer zero values (gracePeriodSeconds: 0)", () => {
  const opts: Json = {
    apiVersion: "meta.k8s.io/v1",
    kind: "DeleteOptions",
    gracePeriodSeconds: 0,
    preconditions: { uid: "u-1", resourceVersion: "5" },
    propagationPolicy: "Foreground",
    dryRun: ["All"],
  };
  assert.deepEqual(roundTrip(opts), opts);
  assert.deepEqual(roundTrip({ apiVersion: "v1", kind: "DeleteOptions", orphanDependents: false }), {
    apiVersion: "v1",
    kind: "DeleteOptions",
    orphanDependents: false,
  });
});

test("APIResourceList round trip (Verbs message ⇄ string array)", () => {
  const list: Json = {
    apiVersion: "v1",
    kind: "APIResourceList",
    groupVersion: "v1",
    resources: [
      {
        name: "serviceaccounts",
        singularName: "serviceaccount",
        namespaced: true,
        kind: "ServiceAccount",
        verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
        shortNames: ["sa"],
      },
      { name: "namespaces/status", singularName: "", namespaced: false, kind: "Namespace", verbs: ["get"] },
    ],
  };
  assert.deepEqual(roundTrip(list), list);
});

test("output starts with the k8s protobuf prefix and wraps a runtime.Unknown like kube", () => {
  const bytes = encodeProtobuf({ apiVersion: "v1", kind: "Namespace", metadata: { name: "n" } });
  assert.ok(bytes.subarray(0, 4).equals(PROTOBUF_PREFIX));
  assert.equal(bytes.subarray(0, 4).toString("hex"), "6b387300");
  // Unknown.typeMeta (field 1) = runtime.TypeMeta{apiVersion=1: "v1", kind=2: "Namespace"}
  const typeMeta = [...lfield(1, "v1"), ...lfield(2, "Namespace")];
  assert.deepEqual([...bytes.subarray(4, 4 + 2 + typeMeta.length)], lfield(1, typeMeta));
  // kube's Unknown.NestedMarshalTo always ends with empty contentEncoding(3) and contentType(4).
  assert.deepEqual([...bytes.subarray(bytes.length - 4)], [0x1a, 0x00, 0x22, 0x00]);
});

test("decode rejects a wrong or short prefix", () => {
  const good = encodeProtobuf({ apiVersion: "v1", kind: "Namespace", metadata: { name: "n" } });
  const bad = Buffer.from(good);
  bad[3] = 0x01;
  assert.throws(() => decodeProtobuf(bad), ProtobufDecodeError);
  assert.throws(() => decodeProtobuf(Buffer.from('{"kind":"Namespace"}')), /expected prefix 6b387300/);
  assert.throws(() => decodeProtobuf(Buffer.from([0x6b, 0x38])), ProtobufDecodeError);
  assert.throws(() => decodeProtobuf(Buffer.from(PROTOBUF_PREFIX)), ProtobufDecodeError);
  assert.throws(() => decodeProtobuf(Buffer.concat([PROTOBUF_PREFIX, Buffer.from([0x0a, 0x7f, 0x01])])), ProtobufDecodeError);
});

test("unsupported kinds throw ProtobufUnsupportedError", () => {
  assert.throws(
    () => encodeProtobuf({ apiVersion: "meta.k8s.io/v1", kind: "Table", columnDefinitions: [], rows: [] }),
    ProtobufUnsupportedError,
  );
  assert.throws(() => encodeProtobuf({ apiVersion: "example.com/v1", kind: "Widget" }), ProtobufUnsupportedError);
  assert.throws(() => encodeProtobuf({ kind: "Namespace" }), ProtobufUnsupportedError);
});

test("hand-built ServiceAccount bytes decode (field numbers checked independently of .proto)", () => {
  const seconds = Date.UTC(2026, 0, 2, 3, 4, 5) / 1000;
  // ObjectMeta: name=1, generateName=2 (Go always writes non-pointer strings; "" must be dropped),
  // namespace=3, generation=7 (0, dropped), creationTimestamp=8 (Time{seconds=1}), labels=11 (map entry key=1,value=2)
  const objectMeta = [
    ...lfield(1, "sa1"),
    ...lfield(2, ""),
    ...lfield(3, "ns"),
    ...vfield(7, 0),
    ...lfield(8, vfield(1, seconds)),
    ...lfield(11, [...lfield(1, "k"), ...lfield(2, "v")]),
  ];
  // ServiceAccount: metadata=1, secrets=2 (ObjectReference name=3, kind=1), imagePullSecrets=3, automount=4
  const sa = [
    ...lfield(1, objectMeta),
    ...lfield(2, [...lfield(1, "Secret"), ...lfield(3, "tok")]),
    ...lfield(3, lfield(1, "pull")),
    ...vfield(4, 0),
  ];
  // runtime.Unknown: typeMeta=1 {apiVersion=1, kind=2}, raw=2, contentEncoding=3, contentType=4
  const unknown = [
    ...lfield(1, [...lfield(1, "v1"), ...lfield(2, "ServiceAccount")]),
    ...lfield(2, sa),
    ...lfield(3, ""),
    ...lfield(4, ""),
  ];
  const wire = Buffer.from([0x6b, 0x38, 0x73, 0x00, ...unknown]);
  const expected: Json = {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "sa1", namespace: "ns", creationTimestamp: "2026-01-02T03:04:05Z", labels: { k: "v" } },
    secrets: [{ kind: "Secret", name: "tok" }],
    imagePullSecrets: [{ name: "pull" }],
    automountServiceAccountToken: false,
  };
  assert.deepEqual(decodeProtobuf(wire), expected);

  // And our encoder produces exactly these bytes (minus the fields Go writes as zero values).
  const objectMetaMin = [
    ...lfield(1, "sa1"),
    ...lfield(3, "ns"),
    ...lfield(8, vfield(1, seconds)),
    ...lfield(11, [...lfield(1, "k"), ...lfield(2, "v")]),
  ];
  const saMin = [
    ...lfield(1, objectMetaMin),
    ...lfield(2, [...lfield(1, "Secret"), ...lfield(3, "tok")]),
    ...lfield(3, lfield(1, "pull")),
    ...vfield(4, 0),
  ];
  const unknownMin = [
    ...lfield(1, [...lfield(1, "v1"), ...lfield(2, "ServiceAccount")]),
    ...lfield(2, saMin),
    ...lfield(3, ""),
    ...lfield(4, ""),
  ];
  assert.deepEqual([...encodeProtobuf(expected)], [0x6b, 0x38, 0x73, 0x00, ...unknownMin]);
});

test("hand-built rbac/meta bytes: RoleRef, Subject, ListMeta, Status field numbers", () => {
  // ClusterRoleBinding: metadata=1, subjects=2 {kind=1, apiGroup=2, name=3, namespace=4}, roleRef=3 {apiGroup=1, kind=2, name=3}
  const crb = [
    ...lfield(1, lfield(1, "b")),
    ...lfield(2, [...lfield(1, "ServiceAccount"), ...lfield(2, ""), ...lfield(3, "sa"), ...lfield(4, "ns")]),
    ...lfield(3, [...lfield(1, "rbac.authorization.k8s.io"), ...lfield(2, "ClusterRole"), ...lfield(3, "view")]),
  ];
  const wire = (apiVersion: string, kind: string, body: number[]): Buffer =>
    Buffer.from([0x6b, 0x38, 0x73, 0x00, ...lfield(1, [...lfield(1, apiVersion), ...lfield(2, kind)]), ...lfield(2, body)]);
  assert.deepEqual(decodeProtobuf(wire("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", crb)), {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "b" },
    subjects: [{ kind: "ServiceAccount", name: "sa", namespace: "ns" }],
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
  });
  // Status: metadata=1 (ListMeta resourceVersion=2, continue=3, remainingItemCount=4), status=2, message=3,
  // reason=4, details=5 {name=1, group=2, kind=3, causes=4 {reason=1, message=2, field=3}, retryAfterSeconds=5, uid=6}, code=6
  const status = [
    ...lfield(1, [...lfield(2, "7"), ...lfield(3, "c"), ...vfield(4, 3)]),
    ...lfield(2, "Failure"),
    ...lfield(3, "m"),
    ...lfield(4, "Conflict"),
    ...lfield(5, [...lfield(1, "n"), ...lfield(2, "g"), ...lfield(3, "k"), ...lfield(4, [...lfield(1, "r"), ...lfield(3, "f")]), ...vfield(5, 1), ...lfield(6, "u")]),
    ...vfield(6, 409),
  ];
  assert.deepEqual(decodeProtobuf(wire("v1", "Status", status)), {
    apiVersion: "v1",
    kind: "Status",
    metadata: { resourceVersion: "7", continue: "c", remainingItemCount: 3 },
    status: "Failure",
    message: "m",
    reason: "Conflict",
    details: { name: "n", group: "g", kind: "k", uid: "u", causes: [{ reason: "r", field: "f" }], retryAfterSeconds: 1 },
    code: 409,
  });
});

test("watch frames: 4-byte BE length + bare WatchEvent whose object.raw is a full envelope", () => {
  const sa: Json = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "a", namespace: "ns", resourceVersion: "5" } };
  const ns: Json = { apiVersion: "v1", kind: "Namespace", metadata: { name: "gone" }, spec: { finalizers: ["kubernetes"] } };
  const bookmark: Json = {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { resourceVersion: "6", annotations: { "k8s.io/initial-events-end": "true" } },
  };
  const f1 = encodeWatchEventFrame("ADDED", sa);
  const f2 = encodeWatchEventFrame("DELETED", ns);
  const f3 = encodeWatchEventFrame("BOOKMARK", bookmark);

  // Frame layout checked byte by byte.
  assert.equal(f1.readUInt32BE(0), f1.length - 4);
  const body = f1.subarray(4);
  const envelope = encodeProtobuf(sa);
  const rawExt = lfield(1, [...envelope]);
  assert.deepEqual([...body], [...lfield(1, "ADDED"), ...lfield(2, rawExt)]);
  assert.notEqual(body[0], 0x6b); // the WatchEvent itself carries no k8s prefix

  assert.deepEqual(decodeWatchEventFrames(Buffer.concat([f1, f2, f3])), [
    { type: "ADDED", object: sa },
    { type: "DELETED", object: ns },
    { type: "BOOKMARK", object: bookmark },
  ]);
  assert.throws(() => decodeWatchEventFrames(f1.subarray(0, f1.length - 1)), ProtobufDecodeError);
});

test("metav1.Time drops sub-second precision; MicroTime keeps microseconds", () => {
  // No served kind embeds MicroTime, so exercise the generic walk on a test-only message.
  const root = protoRoot();
  if (root.lookup("plinth.test.Times") === null) {
    protobuf.parse(
      `syntax = "proto2"; package plinth.test;
       message Times {
         optional k8s.io.apimachinery.pkg.apis.meta.v1.Time t = 1;
         optional k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime mt = 2;
       }`,
      root,
      { keepCase: true },
    );
    root.resolveAll();
  }
  const type = root.lookupType("plinth.test.Times");
  const ctx = { isEnvelope: () => false, decodeEnvelope: () => ({}) };
  const convert = (json: Json): Json => {
    const bytes = type.encode(type.fromObject(jsonToProtoObject(type, json))).finish();
    const plain = type.toObject(type.decode(bytes), { longs: Number, bytes: String, defaults: false });
    return protoObjectToJson(type, plain, ctx);
  };
  assert.deepEqual(convert({ t: "2026-01-02T03:04:05.987Z", mt: "2026-01-02T03:04:05.123456Z" }), {
    t: "2026-01-02T03:04:05Z",
    mt: "2026-01-02T03:04:05.123456Z",
  });
  assert.deepEqual(convert({ t: "2026-01-02T05:04:05+02:00", mt: "1970-01-01T00:00:00.000001Z" }), {
    t: "2026-01-02T03:04:05Z",
    mt: "1970-01-01T00:00:00.000001Z",
  });
  assert.throws(() => convert({ t: "yesterday" }), /RFC3339/);
});

test("a realistic Pod round trips: inlined VolumeSource, IntOrString, Quantity, repeated scalars unpacked as proto2", () => {
  const pod: Json = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "ns", labels: { app: "web" } },
    spec: {
      containers: [
        {
          name: "app",
          image: "nginx:1.25",
          command: ["nginx", "-g", "daemon off;"],
          ports: [{ name: "http", containerPort: 8080, protocol: "TCP" }],
          env: [{ name: "MODE", value: "fast" }, { name: "POD", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
          resources: { limits: { cpu: "500m", memory: "128Mi" }, requests: { cpu: "1" } },
          readinessProbe: { httpGet: { path: "/healthz", port: "http" }, periodSeconds: 5 },
          livenessProbe: { tcpSocket: { port: 8080 } },
          volumeMounts: [{ name: "conf", mountPath: "/etc/app", readOnly: true }],
        },
      ],
      volumes: [{ name: "conf", configMap: { name: "app-conf", defaultMode: 420 } }, { name: "tmp", emptyDir: {} }],
      securityContext: { supplementalGroups: [1000, 2000], runAsNonRoot: false },
    },
  };
  assert.deepEqual(roundTrip(pod), pod);
  // kube's files are proto2: a repeated int64 is one tag per element (field 4, varint), not packed.
  const ctx = protoRoot().lookupType("k8s.io.api.core.v1.PodSecurityContext");
  const bytes = [...ctx.encode(ctx.fromObject(jsonToProtoObject(ctx, { supplementalGroups: [1, 2] }))).finish()];
  assert.deepEqual(bytes, [...vfield(4, 1), ...vfield(4, 2)]);
  // The volume's source is the parent's JSON, a message of its own (field 2) on the wire.
  const vol = protoRoot().lookupType("k8s.io.api.core.v1.Volume");
  const volBytes = [...vol.encode(vol.fromObject(jsonToProtoObject(vol, { name: "tmp", emptyDir: {} }))).finish()];
  assert.deepEqual(volBytes, [...lfield(1, "tmp"), ...lfield(2, lfield(2, []))]);
});

test("an absent Go pointer without omitempty decodes as null, not as its zero value", () => {
  // kubectl create token sends TokenRequest{spec: {}}: expirationSeconds is a nil *int64 that
  // defaulting turns into 3600; a 0 would be refused as shorter than 10 minutes.
  const token = roundTrip({ apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} });
  assert.equal((token["spec"] as Json)["expirationSeconds"], null);
  const set = roundTrip({ apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 0 } });
  assert.equal((set["spec"] as Json)["expirationSeconds"], 0);
  // A non-pointer field without omitempty still decodes as its zero value (RoleRef.apiGroup).
  const rb = roundTrip({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: { name: "a" }, roleRef: { kind: "ClusterRole", name: "view" } });
  assert.equal((rb["roleRef"] as Json)["apiGroup"], "");
  const ing = roundTrip({
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name: "i" },
    spec: { rules: [{ http: { paths: [{ path: "/", backend: { service: { name: "s", port: { number: 80 } } } }] } }] },
  });
  const path = ((((ing["spec"] as Json)["rules"] as Json[])[0]!["http"] as Json)["paths"] as Json[])[0]!;
  assert.equal(path["pathType"], null);
});
