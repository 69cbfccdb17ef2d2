/**
 * The protobufjs Root of kube's messages, built once from the pinned schema source
 * (`Root.fromJSON` of its Protobuf facts: every message and field number of kube 1.24's
 * generated.proto files plinth's types reach), plus gnostic's OpenAPIv2.proto (the /openapi/v2
 * Protobuf form, under `proto/openapi`). Repeated scalars are unpacked: kube's files are proto2,
 * and protobufjs packs them by default in a JSON descriptor.
 */
import { readdirSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";
import { kubeSchema, type ProtoFieldFacts } from "@plinth/api";

/**
 * Directory holding gnostic's OpenAPIv2.proto (`<repo>/proto`). Compiled, this file lives at
 * packages/apiserver/dist/protobuf/loader.js, so the repo root is four levels up.
 * PLINTH_PROTO_DIR overrides it (used when the module is compiled elsewhere, e.g. in tests).
 */
export function protoDir(): string {
  const fromEnv = process.env["PLINTH_PROTO_DIR"];
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  return fileURLToPath(new URL("../../../../proto/", import.meta.url));
}

function listProtoFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...listProtoFiles(full));
    else if (name.endsWith(".proto")) out.push(full);
  }
  return out;
}

let cachedRoot: protobuf.Root | undefined;

/**
 * Message nesting protobufjs accepts when encoding, decoding and converting (its default is 100,
 * protoc's; gogo-protobuf in kube has none). plinth holds every object to 100 levels of JSON
 * (@plinth/api MAX_NESTING_DEPTH), and one JSON level can be two message levels: a CRD schema's
 * `items` or `additionalProperties` is a JSONSchemaPropsOr* message holding a JSONSchemaProps.
 * So any object plinth stores encodes; what a decoded body nests deeper in JSON is refused after.
 */
export const PROTOBUF_RECURSION_LIMIT = 256;

type FieldJSON = { id: number; type: string; rule?: "repeated"; keyType?: string; options?: { packed: false } };
type NamespaceJSON = { nested?: Record<string, NamespaceJSON>; fields?: Record<string, FieldJSON> };

const SCALARS = new Set(["double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64", "sfixed32", "sfixed64", "bool"]);

/** The protobufjs JSON descriptor of every message of the schema source, nested by package. */
export function kubeProtoJSON(): NamespaceJSON {
  const root: NamespaceJSON = { nested: {} };
  const add = (fullName: string, fields: Record<string, ProtoFieldFacts>): void => {
    const parts = fullName.split(".");
    let ns = root;
    for (const p of parts.slice(0, -1)) ns = (ns.nested![p] ??= { nested: {} });
    const out: Record<string, FieldJSON> = {};
    for (const [name, f] of Object.entries(fields)) {
      const field: FieldJSON = { id: f.id, type: f.type };
      if (f.keyType) field.keyType = f.keyType;
      else if (f.rule) {
        field.rule = f.rule;
        // proto2 does not pack repeated scalars; protobufjs' JSON form would.
        if (SCALARS.has(f.type)) field.options = { packed: false };
      }
      out[name] = field;
    }
    ns.nested![parts[parts.length - 1]!] = { fields: out };
  };
  const file = kubeSchema();
  for (const d of Object.values(file.definitions)) if (d.proto) add(d.proto.message, d.proto.fields);
  for (const [name, fields] of Object.entries(file.messages)) add(name, fields);
  return root;
}

/** The Root (built once): kube's messages and gnostic's. */
export function protoRoot(): protobuf.Root {
  if (cachedRoot !== undefined) return cachedRoot;
  protobuf.util.recursionLimit = PROTOBUF_RECURSION_LIMIT;
  protobuf.Reader.recursionLimit = PROTOBUF_RECURSION_LIMIT;
  const root = protobuf.Root.fromJSON(kubeProtoJSON() as protobuf.INamespace);
  const dir = protoDir();
  const files = listProtoFiles(dir);
  if (files.length === 0) throw new Error(`no .proto files found under ${dir}`);
  root.resolvePath = (_origin: string, target: string): string => (isAbsolute(target) ? target : join(dir, target));
  root.loadSync(files, { keepCase: true });
  root.resolveAll();
  cachedRoot = root;
  return root;
}

/** The message type with the given fully-qualified name (no leading dot), if any. */
export function lookupMessage(fullName: string): protobuf.Type | undefined {
  const found = protoRoot().lookup(fullName);
  return found instanceof protobuf.Type ? found : undefined;
}

/** Like lookupMessage but throws: for messages the codec itself depends on. */
export function requireMessage(fullName: string): protobuf.Type {
  const t = lookupMessage(fullName);
  if (t === undefined) throw new Error(`protobuf message ${fullName} not found`);
  return t;
}
