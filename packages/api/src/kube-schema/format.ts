/**
 * The format of plinth's one pinned schema source, `packages/api/schema/kube-<version>.json`:
 * facts about kube's API types, taken by `tools/kube-schema/generate.ts` from kube's own Go API
 * packages (types.go struct tags and markers, generated.proto) at one tag. No prose: kube's field
 * descriptions are not in it. Everything plinth derives per type (decoding, OpenAPI v2/v3,
 * Protobuf, server-side apply typing, strategic merge patch keys) reads this file.
 */

/** One Go module the file was generated from. */
export interface SchemaSourceInput {
  /** The Go module (`k8s.io/api`). */
  module: string;
  /** Its GitHub repository (`kubernetes/api`). */
  repo: string;
  tag: string;
  commit: string;
  /** sha256 over the input files read (sorted paths relative to the module root, then contents). */
  sha256: string;
  /** Packages read, relative to the module root. */
  packages: string[];
  /** When only some types of the packages were taken (a newer release's kinds plinth serves). */
  types?: string[];
}

export interface SchemaFileHeader {
  /** The generator that wrote the file (repository path). */
  generator: string;
  /** The Kubernetes release the types are. */
  kubernetes: string;
  inputs: SchemaSourceInput[];
}

/**
 * A schema node as kube-openapi writes a property (OpenAPI v2 form), plus the Go facts plinth's
 * decoder needs. `$ref` names a definition of the file (kube's OpenAPI name).
 */
export interface SchemaNode {
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array';
  format?: string;
  $ref?: string;
  items?: SchemaNode;
  additionalProperties?: SchemaNode;
  /** The value kube-openapi puts in OpenAPI v3 `default` (the `+default` markers and the zero values it enforces). */
  default?: unknown;
  /** The Go type as Go names it in errors (`v1.Protocol`, `[]string`), when it is a named type. */
  go?: string;
}

/** A Go struct field (in Go order). */
export interface FieldFacts {
  /** The JSON name; '' for an inlined struct (`json:",inline"`). */
  name: string;
  /** Go's field name (union members are named by it). */
  goName: string;
  schema: SchemaNode;
  /** kube-openapi's rule: no `omitempty` and no `+optional`. */
  required?: true;
  /** A Go pointer (`*int32`, `*ObjectReference`): a zero value set is kept, an unset one is absent. */
  pointer?: true;
  omitempty?: true;
  /** Inlined into its parent's JSON object (`json:",inline"`); `schema.$ref` names what is inlined. */
  inline?: true;
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
  mapType?: 'atomic' | 'granular';
  patchStrategy?: string;
  patchMergeKey?: string;
  /** The Protobuf field's name in the definition's message (absent: no Protobuf field). */
  proto?: string;
}

/** A Protobuf field, as protobufjs' JSON descriptor has it (`packed: false`: kube is proto2). */
export interface ProtoFieldFacts {
  id: number;
  /** A scalar type, or a message's fully-qualified name with a leading dot. */
  type: string;
  rule?: 'repeated';
  keyType?: string;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface DefinitionFacts {
  /** The Go type as Go names it (`v1.ConfigMap`). */
  go: string;
  /**
   * It decodes JSON itself (a Go `UnmarshalJSON` method: Time, Quantity, IntOrString, RawExtension,
   * FieldsV1, apiextensions JSON ...): its JSON form is not its fields'.
   */
  customJSON?: true;
  /** Struct fields in Go order; absent for a type with a custom OpenAPI form. */
  fields?: FieldFacts[];
  /**
   * A type with a custom JSON form (Time, Quantity, IntOrString, RawExtension's object...): its
   * OpenAPI v2 schema as kube-openapi writes it (`{}` when kube declares no type).
   */
  openapi?: SchemaNode;
  /** OpenAPI v3 `oneOf` types kube declares for it (IntOrString, Quantity). */
  v3OneOf?: string[];
  /** `+structType` (published as x-kubernetes-map-type). */
  mapType?: 'atomic' | 'granular';
  /** x-kubernetes-unions, as kube-openapi publishes them. */
  unions?: Array<{ discriminator?: string; 'fields-to-discriminateBy': Record<string, string> }>;
  /** The kinds this type is registered as (kube's scheme: `register.go`). */
  gvk?: GroupVersionKind[];
  /**
   * Registered in every served group-version (meta/v1 WatchEvent and the option types), as
   * kube's metav1.AddToGroupVersion does.
   */
  everyGroupVersion?: true;
  /** Its Protobuf message: fully-qualified name (no leading dot) and fields by name. */
  proto?: { message: string; fields: Record<string, ProtoFieldFacts> };
}

export interface KubeSchemaFile {
  source: SchemaFileHeader;
  /** By kube's OpenAPI definition name (`io.k8s.api.core.v1.ConfigMap`), sorted. */
  definitions: Record<string, DefinitionFacts>;
  /**
   * Protobuf messages that are no Go struct of their own (a named slice wrapped in a message on
   * the wire: meta/v1 Verbs, authentication's ExtraValue), by fully-qualified name.
   */
  messages: Record<string, Record<string, ProtoFieldFacts>>;
}
