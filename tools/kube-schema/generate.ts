/**
 * Writes plinth's one pinned schema source, `packages/api/schema/kube-1.24.17.json`, from kube's
 * own Go API packages: `types.go` struct tags and `+markers` (JSON names, omitempty, pointers,
 * inline, list/map/struct markers, patch tags, `+default`), `register.go` (the kinds) and
 * `generated.proto` (Protobuf messages and field numbers). The rules are kube-openapi's (the
 * generator kube 1.24 ran, k8s.io/kube-openapi@3ee0da9b0b42 pkg/generators/openapi.go): required
 * is "no omitempty and no +optional"; v3 defaults are the `+default` markers plus the values it
 * enforces (`{}` for a non-pointer struct, the zero value of a non-omitempty builtin, also for
 * list items and map values). No comment text reaches the output, only markers.
 *
 * A dev-time tool, not run by the build or the tests. With the sources unpacked (see
 * docs/architecture.md, "The schema source"):
 *
 *   make kube-schema KUBE_REF=/work/ref
 *
 * which runs `npx tsc -p tools/kube-schema && node tools/kube-schema/dist/tools/kube-schema/generate.js
 * --ref <dir> --out packages/api/schema/kube-1.24.17.json`. The output is deterministic.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import protobuf from 'protobufjs';
import type { DefinitionFacts, FieldFacts, GroupVersionKind, KubeSchemaFile, ProtoFieldFacts, SchemaNode, SchemaSourceInput } from '../../packages/api/src/kube-schema/format.js';
import { readPackage, type GoField, type GoPackage, type GoType, type GoTypeDecl } from './go-types.js';

interface ModuleSource {
  module: string;
  repo: string;
  tag: string;
  commit: string;
  dir: string;
  packages: string[];
  types?: string[];
}

interface Sources {
  kubernetes: string;
  /** Types wanted though no kind registers them (`<package path>.<type>`). */
  roots?: { types: string[] };
  modules: ModuleSource[];
}

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const refDir = resolve(args.get('ref') ?? '/work/ref');
const toolDir = resolve(args.get('tool') ?? 'tools/kube-schema');
const outFile = resolve(args.get('out') ?? 'packages/api/schema/kube-1.24.17.json');
const sources = JSON.parse(readFileSync(join(toolDir, 'sources.json'), 'utf8')) as Sources;

// ---------------------------------------------------------------------------------------------
// Go packages and their proto files

const packages = new Map<string, GoPackage>();
/** Go package path → its proto package, and the protobufjs root holding it. */
const protoOf = new Map<string, { pkg: string; root: protobuf.Root }>();
const inputs: SchemaSourceInput[] = [];
/** Types taken from a module that adds only some types (a newer release's kinds). */
const addedTypes = new Set<string>();
/** Kinds by Go type (`<package path>.<type>`), and the types every group-version registers. */
const kindsOf = new Map<string, GroupVersionKind[]>();
const everyGV = new Set<string>();

function moduleDir(m: ModuleSource): string {
  return join(refDir, m.dir);
}

/** A protobufjs root over the modules, imports resolved to their unpacked directories. */
function protoRoot(files: string[], overrides: Map<string, string>): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    for (const [prefix, dir] of overrides) if (target.startsWith(prefix)) return join(dir, target.slice(prefix.length));
    for (const m of sources.modules) if (!m.types && target.startsWith(`${m.module}/`)) return join(moduleDir(m), target.slice(m.module.length + 1));
    return target;
  };
  root.loadSync(files, { keepCase: true });
  root.resolveAll();
  return root;
}

function sha256Of(base: string, files: Array<{ path: string; text: string }>): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    h.update(relative(base, f.path)).update('\0').update(f.text).update('\0');
  }
  return h.digest('hex');
}

for (const m of sources.modules) {
  const base = moduleDir(m);
  const read: Array<{ path: string; text: string }> = [];
  const protoFiles: string[] = [];
  for (const p of m.packages) {
    const dir = join(base, p);
    const pkg = readPackage(dir, `${m.module}/${p}`);
    read.push(...pkg.files);
    const protoFile = join(dir, 'generated.proto');
    if (existsSync(protoFile)) {
      read.push({ path: protoFile, text: readFileSync(protoFile, 'utf8') });
      protoFiles.push(protoFile);
    }
    if (m.types) {
      const into = packages.get(pkg.path);
      if (!into) throw new Error(`${m.module}@${m.tag} adds types to ${pkg.path}, which no earlier module has`);
      for (const t of m.types) {
        const decl = pkg.types.get(t);
        if (!decl) throw new Error(`${t} not found in ${pkg.path}@${m.tag}`);
        if (into.types.has(t)) throw new Error(`${t} already exists in ${pkg.path}`);
        into.types.set(t, decl);
        addedTypes.add(`${pkg.path}.${t}`);
      }
      // Its kinds: register.go of that release.
      registerKinds(pkg, dir, m.types);
    } else {
      packages.set(pkg.path, pkg);
      registerKinds(pkg, dir);
    }
  }
  const overrides = new Map<string, string>(m.types ? [[`${m.module}/`, base]] : []);
  const root = protoRoot(protoFiles, overrides);
  for (const p of m.packages) {
    const file = join(base, p, 'generated.proto');
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    const protoPkg = /^package ([\w.]+);/m.exec(text)?.[1];
    if (!protoPkg) throw new Error(`no package in ${file}`);
    const goPath = `${m.module}/${p}`;
    if (m.types) for (const t of m.types) protoOf.set(`${goPath}.${t}`, { pkg: protoPkg, root });
    else protoOf.set(goPath, { pkg: protoPkg, root });
  }
  inputs.push({ module: m.module, repo: m.repo, tag: m.tag, commit: m.commit, sha256: sha256Of(base, read), packages: m.packages, ...(m.types ? { types: m.types } : {}) });
}

// ---------------------------------------------------------------------------------------------
// Kinds (register.go)

function addKind(pkgPath: string, type: string, gvk: GroupVersionKind): void {
  const key = `${pkgPath}.${type}`;
  const list = kindsOf.get(key) ?? [];
  if (!list.some((g) => g.group === gvk.group && g.version === gvk.version && g.kind === gvk.kind)) list.push(gvk);
  kindsOf.set(key, list);
}

function registerKinds(pkg: GoPackage, dir: string, only?: string[]): void {
  const file = join(dir, 'register.go');
  if (!existsSync(file)) return;
  const src = readFileSync(file, 'utf8').replace(/\/\/.*$/gm, '');
  const groupName = /GroupName\s*=\s*"([^"]*)"/.exec(src)?.[1];
  const version = /SchemeGroupVersion\s*=\s*schema\.GroupVersion\{Group:\s*GroupName,\s*Version:\s*"([^"]+)"\}/.exec(src)?.[1];
  if (groupName === undefined || version === undefined) return;
  const take = (types: string[], gv: { group: string; version: string }): void => {
    for (const t of types) if (!only || only.includes(t)) addKind(pkg.path, t, { group: gv.group, version: gv.version, kind: t });
  };
  const objects = (text: string): string[] => [...text.matchAll(/&(\w+)\{\}/g)].map((x) => x[1]!);
  for (const m of src.matchAll(/AddKnownTypes\(SchemeGroupVersion,([\s\S]*?)\)/g)) take(objects(m[1]!), { group: groupName, version });
  // meta/v1: the unversioned kinds, and the kinds every group-version registers.
  for (const m of src.matchAll(/AddUnversionedTypes\(Unversioned,([\s\S]*?)\)/g)) take(objects(m[1]!), { group: '', version: 'v1' });
  const options = /optionsTypes = \[\]runtime\.Object\{([\s\S]*?)\}\n/.exec(src);
  if (options) {
    const opts = objects(options[1]!);
    take(opts, { group: groupName, version });
    for (const t of opts) everyGV.add(`${pkg.path}.${t}`);
  }
  if (/WithKind\(WatchEventKind\), &WatchEvent\{\}/.test(src)) everyGV.add(`${pkg.path}.WatchEvent`);
}

// ---------------------------------------------------------------------------------------------
// Names and types

/** kube-openapi's definition name: `k8s.io/api/core/v1` + `Pod` → `io.k8s.api.core.v1.Pod`. */
function definitionName(pkgPath: string, type: string): string {
  const [domain, ...rest] = pkgPath.split('/');
  return [...domain!.split('.').reverse(), ...rest, type].join('.');
}

function lookupDecl(t: { pkg: string; name: string }): GoTypeDecl {
  const pkg = packages.get(t.pkg);
  const decl = pkg?.types.get(t.name);
  if (!decl) throw new Error(`Go type ${t.pkg}.${t.name} not found (is its package in sources.json?)`);
  if (decl.unreadable) throw new Error(`Go type ${t.pkg}.${t.name} could not be read: ${decl.unreadable}`);
  return decl;
}

/** Types of the standard library kube's API types use, as gengo sees them. */
const STDLIB: Record<string, GoType> = {
  'time.Duration': { kind: 'named', pkg: '', name: 'int64' },
};

/** Follows named non-struct types and aliases (kube-openapi's resolveAliasAndPtrType, minus pointers). */
function resolveNamed(t: GoType): GoType {
  for (let i = 0; i < 32; i++) {
    if (t.kind !== 'named' || t.pkg === '') return t;
    const std = STDLIB[`${t.pkg}.${t.name}`];
    if (std) {
      t = std;
      continue;
    }
    if (t.pkg === 'time' && t.name === 'Time') return t;
    const decl = lookupDecl(t);
    if (!decl.underlying) return t;
    t = decl.underlying;
  }
  throw new Error('type alias loop');
}

function resolvePointers(t: GoType): GoType {
  let r = resolveNamed(t);
  while (r.kind === 'pointer') r = resolveNamed(r.elem);
  return r;
}

/** How Go prints a type in errors (`v1.Protocol`, `[]uint8`, `map[string]string`). */
function goString(t: GoType): string {
  switch (t.kind) {
    case 'pointer':
      return `*${goString(t.elem)}`;
    case 'slice':
      return `[]${goString(t.elem)}`;
    case 'map':
      return `map[${goString(t.key)}]${goString(t.elem)}`;
    case 'interface':
      return 'interface {}';
    case 'named': {
      if (t.pkg === '') return t.name === 'byte' ? 'uint8' : t.name;
      const decl = t.pkg === 'time' ? undefined : lookupDecl(t);
      if (decl?.alias && decl.underlying) return goString(decl.underlying);
      const pkgName = t.pkg === 'time' ? 'time' : packages.get(t.pkg)!.name;
      return `${pkgName}.${t.name}`;
    }
  }
}

const TYPE_FORMAT: Record<string, [string, string, unknown]> = {
  uint: ['integer', 'int32', 0], uint8: ['integer', 'byte', 0], uint16: ['integer', 'int32', 0], uint32: ['integer', 'int64', 0], uint64: ['integer', 'int64', 0],
  int: ['integer', 'int32', 0], int8: ['integer', 'byte', 0], int16: ['integer', 'int32', 0], int32: ['integer', 'int32', 0], int64: ['integer', 'int64', 0],
  byte: ['integer', 'byte', 0], float64: ['number', 'double', 0], float32: ['number', 'float', 0], bool: ['boolean', '', false], string: ['string', '', ''],
};

/** Whether a named type is a struct (a definition of its own). */
function isStruct(t: GoType): boolean {
  return t.kind === 'named' && t.pkg !== '' && (t.pkg === 'time' || !!lookupDecl(t).fields);
}

type Named = Extract<GoType, { kind: 'named' }>;

/** kube-openapi's mustEnforceDefault (after resolveAliasAndEmbeddedType). */
function enforcedDefault(t: GoType, omitempty: boolean): unknown {
  const r = resolveNamed(t);
  if (r.kind === 'pointer' || r.kind === 'map' || r.kind === 'slice' || r.kind === 'interface') return undefined;
  if (isStruct(r)) return {};
  const tf = TYPE_FORMAT[(r as Named).name];
  if (!tf) throw new Error(`no OpenAPI type for ${r.name}`);
  return omitempty ? undefined : tf[2];
}

const queue: Array<{ pkg: string; name: string }> = [];
const queued = new Set<string>();

function want(t: { pkg: string; name: string }): string {
  const key = `${t.pkg}.${t.name}`;
  if (!queued.has(key)) {
    queued.add(key);
    queue.push({ pkg: t.pkg, name: t.name });
  }
  return definitionName(t.pkg, t.name);
}

/** The schema node of a Go type (kube-openapi's generateProperty/Map/Slice). */
function schemaOf(t: GoType, declared: GoType): SchemaNode {
  const r = resolvePointers(t);
  const out: SchemaNode = {};
  if (r.kind === 'slice') {
    const elem = resolveNamed(r.elem);
    if (elem.kind === 'named' && elem.pkg === '' && elem.name === 'byte') {
      out.type = 'string';
      out.format = 'byte';
    } else {
      out.type = 'array';
      out.items = elementSchema(r.elem);
    }
  } else if (r.kind === 'map') {
    const key = resolvePointers(r.key);
    if (key.kind !== 'named' || key.name !== 'string') throw new Error(`map key ${goString(r.key)} is not a string`);
    out.type = 'object';
    out.additionalProperties = elementSchema(r.elem);
  } else if (r.kind === 'interface') {
    out.type = 'object';
  } else if (isStruct(r)) {
    if ((r as Named).pkg === 'time') throw new Error('time.Time outside metav1.Time');
    out.$ref = want(r as Named);
  } else {
    const tf = TYPE_FORMAT[(r as Named).name];
    if (!tf) throw new Error(`no OpenAPI type for ${goString(r)}`);
    out.type = tf[0] as SchemaNode['type'];
    if (tf[1]) out.format = tf[1];
  }
  // Go's name for the type when it is not what the schema says by itself.
  const decl = declared.kind === 'pointer' ? declared.elem : declared;
  const go = goString(decl);
  if (!out.$ref && go !== defaultGoName(out)) out.go = go;
  return out;
}

/** A list item or map value, with the default kube-openapi enforces on it. */
function elementSchema(elem: GoType): SchemaNode {
  const s = schemaOf(elem, elem);
  const d = enforcedDefault(elem, false);
  if (d !== undefined) s.default = d;
  return s;
}

/** What plinth's decoder calls a schema node's Go type when it has no `go` (schema.ts goType). */
function defaultGoName(s: SchemaNode): string {
  switch (s.type) {
    case 'array':
      return `[]${s.items ? s.items.go ?? (s.items.$ref ? '?' : defaultGoName(s.items)) : 'interface {}'}`;
    case 'object':
      return s.additionalProperties ? `map[string]${s.additionalProperties.go ?? (s.additionalProperties.$ref ? '?' : defaultGoName(s.additionalProperties))}` : 'interface {}';
    case 'integer':
      return s.format === 'int64' ? 'int64' : 'int32';
    case 'number':
      return 'float64';
    case 'boolean':
      return 'bool';
    default:
      return s.format === 'byte' ? '[]uint8' : 'string';
  }
}

function one(markers: Map<string, string[]>, name: string): string | undefined {
  return markers.get(name)?.[0];
}

function jsonTag(f: GoField): { name: string; omitempty: boolean; inline: boolean; asString: boolean } | undefined {
  const tag = f.tags.get('json');
  if (tag === undefined) return { name: f.name, omitempty: false, inline: false, asString: false };
  const [name, ...opts] = tag.split(',');
  if (name === '-') return undefined;
  return { name: name!, omitempty: opts.includes('omitempty'), inline: opts.includes('inline'), asString: opts.includes('string') };
}

function protoTag(f: GoField): { name: string; id: number } | undefined {
  const tag = f.tags.get('protobuf');
  if (!tag) return undefined;
  // The number is the tag's second part; the name is read from the message by that number (one
  // kube tag reads `opt.name=apiGroup`).
  const id = Number(tag.split(',')[1]);
  if (!Number.isInteger(id)) throw new Error(`protobuf tag without a number: ${tag}`);
  return { name: /name=(\w+)/.exec(tag)?.[1] ?? '', id };
}

/** The Protobuf field number of each field's tag (the name is taken from the message). */
const protoIds = new WeakMap<FieldFacts, number>();

function withProto(out: FieldFacts, proto: { name: string; id: number } | undefined): FieldFacts {
  if (proto) {
    out.proto = proto.name;
    protoIds.set(out, proto.id);
  }
  return out;
}

function fieldFacts(f: GoField, owner: string): FieldFacts | undefined {
  if (one(f.markers, 'k8s:openapi-gen') === 'false') return undefined;
  const json = jsonTag(f);
  if (!json) return undefined;
  const proto = protoTag(f);
  const pointer = f.type.kind === 'pointer';
  if (json.inline) {
    const r = resolvePointers(f.type);
    if (!isStruct(r)) throw new Error(`${owner}.${f.name}: inline of a non-struct`);
    return withProto({ name: '', goName: f.name, schema: { $ref: want(r as Named) }, inline: true }, proto);
  }
  const schema: SchemaNode = json.asString ? { type: 'string' } : schemaOf(f.type, f.type);
  const declaredDefault = one(f.markers, 'default');
  const enforced = enforcedDefault(f.type, json.omitempty);
  const def = declaredDefault !== undefined ? JSON.parse(declaredDefault) : enforced;
  if (def !== undefined) schema.default = def;
  const out: FieldFacts = { name: json.name, goName: f.name, schema };
  if (!json.omitempty && !f.markers.has('optional')) out.required = true;
  if (pointer) out.pointer = true;
  if (json.omitempty) out.omitempty = true;
  const listType = one(f.markers, 'listType');
  if (listType) out.listType = listType as FieldFacts['listType'];
  const keys = f.markers.get('listMapKey');
  if (keys) out.listMapKeys = keys;
  const mapType = one(f.markers, 'mapType');
  if (mapType) out.mapType = mapType as FieldFacts['mapType'];
  // kube-openapi publishes the comment markers; kube's strategic merge patch reads the struct tags.
  // kube-openapi refuses to generate when they differ, so either is the fact.
  const patchStrategy = one(f.markers, 'patchStrategy') ?? f.tags.get('patchStrategy');
  if (patchStrategy) out.patchStrategy = patchStrategy;
  const patchMergeKey = one(f.markers, 'patchMergeKey') ?? f.tags.get('patchMergeKey');
  if (patchMergeKey) out.patchMergeKey = patchMergeKey;
  return withProto(out, proto);
}

function protoFields(type: protobuf.Type): Record<string, ProtoFieldFacts> {
  const out: Record<string, ProtoFieldFacts> = {};
  for (const f of type.fieldsArray) {
    const resolved = f.resolvedType;
    const t = resolved ? `.${resolved.fullName.slice(1)}` : f.type;
    const facts: ProtoFieldFacts = { id: f.id, type: t };
    if (f.repeated) facts.rule = 'repeated';
    if (f instanceof protobuf.MapField) facts.keyType = f.keyType;
    out[f.name] = facts;
  }
  return out;
}

function messageOf(pkgPath: string, name: string): protobuf.Type | undefined {
  const p = protoOf.get(`${pkgPath}.${name}`) ?? protoOf.get(pkgPath);
  if (!p) return undefined;
  const found = p.root.lookup(`${p.pkg}.${name}`);
  return found instanceof protobuf.Type ? found : undefined;
}

function definitionOf(t: { pkg: string; name: string }): DefinitionFacts {
  const decl = lookupDecl(t);
  const pkg = packages.get(t.pkg)!;
  const out: DefinitionFacts = { go: `${pkg.name}.${t.name}` };
  if (decl.customJSON) out.customJSON = true;
  const key = `${t.pkg}.${t.name}`;
  if (decl.openapiType !== undefined) {
    // A custom OpenAPI form (OpenAPISchemaType/Format; kube-openapi drops the struct's fields).
    const openapi: SchemaNode = {};
    if (decl.openapiType && decl.openapiType.length > 0) openapi.type = decl.openapiType[0] as SchemaNode['type'];
    if (decl.openapiFormat) openapi.format = decl.openapiFormat;
    out.openapi = openapi;
    if (decl.v3OneOf) out.v3OneOf = decl.v3OneOf;
  } else {
    const fields: FieldFacts[] = [];
    for (const f of decl.fields ?? []) {
      const facts = fieldFacts(f, key);
      if (facts) fields.push(facts);
    }
    out.fields = fields;
    const structType = one(decl.markers, 'structType');
    if (structType) out.mapType = structType as DefinitionFacts['mapType'];
    if (decl.markers.has('union')) {
      const discriminator = (decl.fields ?? []).find((f) => f.markers.has('unionDiscriminator'));
      const by: Record<string, string> = {};
      for (const f of decl.fields ?? []) {
        const json = jsonTag(f);
        if (!json || json.inline || f === discriminator) continue;
        by[json.name] = f.name;
      }
      out.unions = [{ ...(discriminator ? { discriminator: jsonTag(discriminator)!.name } : {}), 'fields-to-discriminateBy': by }];
    }
  }
  const gvk = kindsOf.get(key);
  if (gvk) out.gvk = gvk;
  if (everyGV.has(key)) out.everyGroupVersion = true;
  const message = messageOf(t.pkg, t.name);
  if (message) out.proto = { message: message.fullName.slice(1), fields: protoFields(message) };
  if (out.fields) {
    for (const f of out.fields) {
      if (f.proto === undefined) continue;
      const byId = message?.fieldsArray.find((x) => x.id === protoIds.get(f)!);
      if (!byId) throw new Error(`${key}.${f.goName}: no proto field ${f.proto} = ${protoIds.get(f)} in ${message?.fullName ?? 'no message'}`);
      f.proto = byId.name;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Roots: every registered kind of the packages read, and the envelope's runtime.Unknown.

for (const key of [...kindsOf.keys()].sort()) {
  const dot = key.lastIndexOf('.');
  const pkgPath = key.slice(0, dot);
  const name = key.slice(dot + 1);
  const decl = packages.get(pkgPath)?.types.get(name);
  if (!decl) throw new Error(`registered kind ${key} has no type`);
  // meta/v1beta1's Table & co. are aliases of meta/v1's: the kind is the v1 type's.
  if (decl.alias && decl.underlying?.kind === 'named') {
    const target = decl.underlying;
    for (const g of kindsOf.get(key)!) addKind(target.pkg, target.name, g);
    want(target);
    continue;
  }
  want({ pkg: pkgPath, name });
}
// Registered in every group-version (WatchEvent, the option kinds).
for (const key of [...everyGV].sort()) want({ pkg: key.slice(0, key.lastIndexOf('.')), name: key.slice(key.lastIndexOf('.') + 1) });
// Every type of the packages read that declares a custom OpenAPI form (Time, MicroTime, Duration,
// Quantity, IntOrString, apiextensions' JSON ...), whether or not a kind uses it yet.
for (const pkg of [...packages.values()].sort((a, b) => (a.path < b.path ? -1 : 1))) {
  for (const decl of [...pkg.types.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) if (decl.openapiType !== undefined && decl.fields) want(decl);
}
// The Protobuf envelope.
want({ pkg: 'k8s.io/apimachinery/pkg/runtime', name: 'Unknown' });
for (const key of sources.roots?.types ?? []) want({ pkg: key.slice(0, key.lastIndexOf('.')), name: key.slice(key.lastIndexOf('.') + 1) });

const definitions: Record<string, DefinitionFacts> = {};
while (queue.length > 0) {
  const t = queue.shift()!;
  const name = definitionName(t.pkg, t.name);
  if (definitions[name]) continue;
  definitions[name] = definitionOf(t);
}

// Protobuf messages fields refer to that are no struct of their own in Go (meta/v1 Verbs and
// authentication's ExtraValue are named slices, wrapped in a message on the wire).
const messages: Record<string, Record<string, ProtoFieldFacts>> = {};
const covered = new Set(Object.values(definitions).flatMap((d) => (d.proto ? [d.proto.message] : [])));
const roots = [...new Set([...protoOf.values()].map((p) => p.root))];
const pendingMessages = Object.values(definitions).flatMap((d) => Object.values(d.proto?.fields ?? {}));
while (pendingMessages.length > 0) {
  const f = pendingMessages.pop()!;
  if (!f.type.startsWith('.')) continue;
  const name = f.type.slice(1);
  if (covered.has(name)) continue;
  covered.add(name);
  const found = roots.map((r) => r.lookup(name)).find((x) => x instanceof protobuf.Type);
  if (!(found instanceof protobuf.Type)) throw new Error(`proto message ${name} not found`);
  messages[name] = protoFields(found);
  pendingMessages.push(...Object.values(messages[name]!));
}

const sortedNames = Object.keys(definitions).sort();
const file: KubeSchemaFile = {
  source: {
    generator: 'tools/kube-schema/generate.ts',
    kubernetes: sources.kubernetes,
    inputs,
  },
  definitions: Object.fromEntries(sortedNames.map((n) => [n, definitions[n]!])),
  messages: Object.fromEntries(Object.keys(messages).sort().map((n) => [n, messages[n]!])),
};

// One definition per line group, one field per line: readable diffs when kube's facts change.
const lines: string[] = ['{', `  "source": ${JSON.stringify(file.source)},`, '  "definitions": {'];
sortedNames.forEach((n, i) => {
  const { fields, ...rest } = definitions[n]!;
  const head = JSON.stringify(rest).slice(0, -1);
  const last = i === sortedNames.length - 1 ? '' : ',';
  if (!fields) {
    lines.push(`    ${JSON.stringify(n)}: ${head}}${last}`);
    return;
  }
  lines.push(`    ${JSON.stringify(n)}: ${head}${head.length > 1 ? ',' : ''}"fields": [`);
  fields.forEach((f, j) => lines.push(`      ${JSON.stringify(f)}${j === fields.length - 1 ? '' : ','}`));
  lines.push(`    ]}${last}`);
});
lines.push('  },', `  "messages": ${JSON.stringify(file.messages)}`, '}', '');
writeFileSync(outFile, lines.join('\n'));
process.stdout.write(`${sortedNames.length} definitions, ${addedTypes.size} added from newer releases → ${relative(process.cwd(), outFile)}\n`);
