/**
 * Facts about kube's Go types the wire format cannot express, read from the pinned schema source
 * (once, on first use), so that the JSON <-> protobuf conversion in convert.ts stays a generic
 * walk over protobufjs reflection: each message field's JSON name, whether it is a Go pointer,
 * whether its JSON is written without omitempty, whether it is an inlined struct; and which
 * message a group/version/kind is.
 */
import { definitionNameOfKind, kubeSchema, type DefinitionFacts } from "@plinth/api";

export const META_V1 = "k8s.io.apimachinery.pkg.apis.meta.v1";
export const APIEXTENSIONS_V1 = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1";

/** What convert.ts needs to know about the fields of one message (keyed by proto field name). */
export interface MessageFacts {
  /** The field's key in kube's JSON, where it is not the proto name (`Webhooks`, `$ref`). */
  readonly jsonNames: ReadonlyMap<string, string>;
  /**
   * Go pointers (`*bool`, `*int64`, `*string`): gogo-protobuf writes them only when non-nil, so a
   * zero value on the wire is meaningful and kept. Every other scalar's zero value is dropped when
   * decoding, as Go's `omitempty` drops it from the JSON form.
   */
  readonly pointers: ReadonlySet<string>;
  /**
   * Fields whose json tag has no omitempty: kube's JSON always carries them, the zero value too
   * ("" / 0 / false; an empty list or map as [] / {}).
   */
  readonly alwaysEmit: ReadonlySet<string>;
  /** Embedded structs (`json:",inline"`): their fields sit in the parent's JSON object. */
  readonly inline: ReadonlySet<string>;
}

const NONE: MessageFacts = { jsonNames: new Map(), pointers: new Set(), alwaysEmit: new Set(), inline: new Set() };

let byMessage: Map<string, MessageFacts> | undefined;

function factsOf(def: DefinitionFacts): MessageFacts {
  const jsonNames = new Map<string, string>();
  const pointers = new Set<string>();
  const alwaysEmit = new Set<string>();
  const inline = new Set<string>();
  for (const f of def.fields ?? []) {
    if (f.proto === undefined) continue;
    if (f.inline) {
      inline.add(f.proto);
      continue;
    }
    if (f.name !== f.proto) jsonNames.set(f.proto, f.name);
    if (f.pointer) pointers.add(f.proto);
    if (!f.omitempty) alwaysEmit.add(f.proto);
  }
  return { jsonNames, pointers, alwaysEmit, inline };
}

/** The facts of a message by its fully-qualified name (no leading dot). */
export function messageFacts(fullName: string): MessageFacts {
  if (!byMessage) {
    byMessage = new Map();
    // A type that decodes JSON itself (runtime.Unknown, IntOrString ...) is converted by its proto names.
    for (const d of Object.values(kubeSchema().definitions)) if (d.proto && d.fields && !d.customJSON) byMessage.set(d.proto.message, factsOf(d));
  }
  return byMessage.get(fullName) ?? NONE;
}

/** meta/v1 kinds registered in every group-version (WatchEvent and the option kinds). */
let everyGroupVersion: Map<string, string> | undefined;

/**
 * The fully-qualified protobuf message (no leading dot) kube's scheme has for an apiVersion and
 * kind, or undefined when there is none: not a kind of kube 1.24 (custom resources), or a kind
 * without a Protobuf form (meta.k8s.io Table is `+protobuf=false`).
 */
export function messageForKind(apiVersion: string, kind: string): string | undefined {
  const slash = apiVersion.indexOf("/");
  const group = slash < 0 ? "" : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const file = kubeSchema();
  const name = definitionNameOfKind({ group, version, kind });
  if (name !== undefined) return file.definitions[name]?.proto?.message;
  if (!everyGroupVersion) {
    everyGroupVersion = new Map();
    for (const d of Object.values(file.definitions)) {
      if (d.everyGroupVersion && d.proto) everyGroupVersion.set(d.proto.message.slice(d.proto.message.lastIndexOf(".") + 1), d.proto.message);
    }
  }
  // Every group-version kube serves (a well-formed version of a built-in group) has them.
  if (!/^v\d+((alpha|beta)\d+)?$/.test(version) || !servedGroup(group)) return undefined;
  return everyGroupVersion.get(kind);
}

let groups: Set<string> | undefined;

/** Whether kube 1.24 has the API group (so it registers the meta kinds in its versions). */
function servedGroup(group: string): boolean {
  if (!groups) {
    groups = new Set();
    for (const d of Object.values(kubeSchema().definitions)) for (const g of d.gvk ?? []) groups.add(g.group);
  }
  return groups.has(group);
}
