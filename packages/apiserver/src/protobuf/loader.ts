import { readdirSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

/**
 * Directory holding kube's .proto subsets (`<repo>/proto`). Compiled, this file lives at
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

/** Loads (once) every .proto file under protoDir() into one protobufjs Root. */
export function protoRoot(): protobuf.Root {
  if (cachedRoot !== undefined) return cachedRoot;
  const dir = protoDir();
  const files = listProtoFiles(dir);
  if (files.length === 0) throw new Error(`no .proto files found under ${dir}`);
  protobuf.util.recursionLimit = PROTOBUF_RECURSION_LIMIT;
  protobuf.Reader.recursionLimit = PROTOBUF_RECURSION_LIMIT;
  const root = new protobuf.Root();
  // Imports are written relative to the proto root, as in kube ("k8s.io/apimachinery/...").
  root.resolvePath = (_origin: string, target: string): string =>
    isAbsolute(target) ? target : join(dir, target);
  root.loadSync(files, { keepCase: true });
  root.resolveAll();
  cachedRoot = root;
  return root;
}

/** The message type with the given fully-qualified name (no leading dot), if loaded. */
export function lookupMessage(fullName: string): protobuf.Type | undefined {
  const found = protoRoot().lookup(fullName);
  return found instanceof protobuf.Type ? found : undefined;
}

/** Like lookupMessage but throws: for messages the codec itself depends on. */
export function requireMessage(fullName: string): protobuf.Type {
  const t = lookupMessage(fullName);
  if (t === undefined) throw new Error(`protobuf message ${fullName} not found under ${protoDir()}`);
  return t;
}
