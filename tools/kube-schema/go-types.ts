/**
 * A small reader of the Go API packages kube generates its schemas from: package-level `type`
 * declarations (structs with their fields, struct tags and `+marker` comment lines; named types;
 * aliases), the imports that qualify them, and the custom OpenAPI forms a type declares through
 * `OpenAPISchemaType`/`OpenAPISchemaFormat`/`OpenAPIV3OneOfTypes` methods. Enough of Go for
 * k8s.io/api-style files, which gengo (kube's own generator input) reads the same way; comments
 * other than markers are dropped here and never reach the output.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A Go type expression. */
export type GoType =
  | { kind: 'named'; pkg: string; name: string }
  | { kind: 'pointer'; elem: GoType }
  | { kind: 'slice'; elem: GoType }
  | { kind: 'map'; key: GoType; elem: GoType }
  | { kind: 'interface' };

export interface GoField {
  /** The Go field name; for an embedded field, its type's name. */
  name: string;
  embedded: boolean;
  type: GoType;
  /** Struct tags by key (`json`, `protobuf`, `patchStrategy`, ...). */
  tags: Map<string, string>;
  /** `+name=value` comment markers directly above the field (a marker may repeat). */
  markers: Map<string, string[]>;
}

export interface GoTypeDecl {
  pkg: string;
  name: string;
  /** `type X = Y` (an alias) or `type X Y` (a named type over Y); absent for structs. */
  underlying?: GoType;
  alias?: boolean;
  fields?: GoField[];
  markers: Map<string, string[]>;
  /** Why the declaration could not be read (Go beyond what this reader knows): an error if used. */
  unreadable?: string;
  /** It has an UnmarshalJSON method. */
  customJSON?: boolean;
  /** Custom OpenAPI form from the type's methods (kube-openapi's OpenAPISchemaType/Format). */
  openapiType?: string[] | null;
  openapiFormat?: string;
  v3OneOf?: string[];
}

export interface GoPackage {
  path: string;
  /** The package clause (`v1`), what Go prints before a type name. */
  name: string;
  types: Map<string, GoTypeDecl>;
  /** Every file read, with its text, for the source hash. */
  files: Array<{ path: string; text: string }>;
}

const BUILTINS = new Set(['string', 'bool', 'byte', 'int', 'int8', 'int16', 'int32', 'int64', 'uint', 'uint8', 'uint16', 'uint32', 'uint64', 'float32', 'float64']);

/** Go's struct tag syntax: `key:"value" key2:"value2"`. */
export function parseTags(raw: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /(\w+):"((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(raw); m; m = re.exec(raw)) out.set(m[1]!, m[2]!.replace(/\\(.)/g, '$1'));
  return out;
}

/** gengo's ExtractCommentTags("+", lines): `+name=value` (value '' when there is none). */
function markersOf(comments: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of comments) {
    const line = c.trim();
    if (!line.startsWith('+')) continue;
    const eq = line.indexOf('=');
    const name = eq < 0 ? line.slice(1) : line.slice(1, eq);
    const value = eq < 0 ? '' : line.slice(eq + 1);
    out.set(name, [...(out.get(name) ?? []), value]);
  }
  return out;
}

/** Parses a Go type expression (qualified names resolved through `imports`). */
export function parseType(text: string, pkg: string, imports: ReadonlyMap<string, string>): GoType {
  let rest = text.trim();
  const next = (): GoType => {
    if (rest.startsWith('*')) {
      rest = rest.slice(1);
      return { kind: 'pointer', elem: next() };
    }
    if (rest.startsWith('[]')) {
      rest = rest.slice(2);
      return { kind: 'slice', elem: next() };
    }
    if (rest.startsWith('map[')) {
      rest = rest.slice(4);
      const key = next();
      if (!rest.startsWith(']')) throw new Error(`bad map type ${text}`);
      rest = rest.slice(1);
      return { kind: 'map', key, elem: next() };
    }
    if (rest.startsWith('interface{}')) {
      rest = rest.slice('interface{}'.length);
      return { kind: 'interface' };
    }
    const m = /^(\w+)(?:\.(\w+))?/.exec(rest);
    if (!m) throw new Error(`cannot parse Go type ${text}`);
    rest = rest.slice(m[0].length);
    if (m[2] !== undefined) {
      const path = imports.get(m[1]!);
      if (path === undefined) throw new Error(`unknown import ${m[1]} in ${text} (${pkg})`);
      return { kind: 'named', pkg: path, name: m[2] };
    }
    return { kind: 'named', pkg: BUILTINS.has(m[1]!) ? '' : pkg, name: m[1]! };
  };
  const t = next();
  if (rest.trim() !== '') throw new Error(`trailing text in Go type ${text}: ${rest}`);
  return t;
}

function importsOf(src: string): Map<string, string> {
  const out = new Map<string, string>();
  const add = (alias: string | undefined, path: string): void => {
    out.set(alias ?? path.slice(path.lastIndexOf('/') + 1), path);
  };
  const block = /^import \(([\s\S]*?)^\)/m.exec(src);
  if (block) {
    for (const line of block[1]!.split('\n')) {
      const m = /^\s*(\w+)?\s*"([^"]+)"/.exec(line);
      if (m) add(m[1], m[2]!);
    }
  }
  for (const m of src.matchAll(/^import (\w+ )?"([^"]+)"/gm)) add(m[1]?.trim(), m[2]!);
  return out;
}

/** The `OpenAPI*` methods of a file: custom OpenAPI forms by type name. */
function openapiMethods(src: string, types: Map<string, GoTypeDecl>): void {
  const re = /^func \((?:\w+\s+)?\*?(\w+)\) (OpenAPISchemaType|OpenAPISchemaFormat|OpenAPIV3OneOfTypes)\(\) (?:\[\])?string \{(?:(.*)\}[ \t]*$|\n([\s\S]*?)^\})/gm;
  for (const m of src.matchAll(re)) {
    const decl = types.get(m[1]!);
    if (!decl) continue;
    const body = m[3] ?? m[4] ?? '';
    const strings = [...body.matchAll(/"([^"]*)"/g)].map((x) => x[1]!);
    const isNil = /return nil/.test(body);
    if (m[2] === 'OpenAPISchemaType') decl.openapiType = isNil ? null : strings;
    else if (m[2] === 'OpenAPISchemaFormat') decl.openapiFormat = strings[0] ?? '';
    else decl.v3OneOf = strings;
  }
  // A type with its own JSON form (json.Unmarshaler): the decoder needs a rule of its own for it.
  for (const m of src.matchAll(/^func \((?:\w+\s+)?\*?(\w+)\) UnmarshalJSON\(/gm)) {
    const decl = types.get(m[1]!);
    if (decl) decl.customJSON = true;
  }
}

/** Reads every non-test, non-generated Go file of a package directory. */
export function readPackage(dir: string, path: string): GoPackage {
  const types = new Map<string, GoTypeDecl>();
  const files: GoPackage['files'] = [];
  let pkgName = '';
  const sources: string[] = [];
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.go') || f.endsWith('_test.go') || f.startsWith('zz_generated') || f === 'generated.pb.go' || f.endsWith('_swagger_doc_generated.go')) continue;
    const text = readFileSync(join(dir, f), 'utf8');
    files.push({ path: join(dir, f), text });
    const src = text.replace(/\/\*[\s\S]*?\*\//g, '');
    sources.push(src);
    pkgName ||= /^package (\w+)/m.exec(src)?.[1] ?? '';
    parseFile(src, path, types);
  }
  for (const src of sources) openapiMethods(src, types);
  return { path, name: pkgName, types, files };
}

function parseFile(src: string, pkg: string, types: Map<string, GoTypeDecl>): void {
  const imports = importsOf(src);
  const lines = src.split('\n');
  let comments: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('//')) {
      comments.push(line.replace(/^\/\/ ?/, ''));
      continue;
    }
    const struct = /^type (\w+) struct\s*\{\s*(\})?\s*$/.exec(line);
    if (struct) {
      const fields: GoField[] = [];
      const decl: GoTypeDecl = { pkg, name: struct[1]!, fields, markers: markersOf(comments) };
      if (!struct[2]) {
        try {
          i = parseStruct(lines, i + 1, pkg, imports, fields);
        } catch (e) {
          decl.unreadable = e instanceof Error ? e.message : String(e);
          while (i < lines.length && lines[i] !== '}') i++;
        }
      }
      types.set(struct[1]!, decl);
    } else {
      const named = /^type (\w+) (=\s*)?([^{}]+?)\s*(\/\/.*)?$/.exec(line);
      if (named && !/^interface\b/.test(named[3]!) && !/^func\b/.test(named[3]!)) {
        const decl: GoTypeDecl = { pkg, name: named[1]!, alias: !!named[2], markers: markersOf(comments) };
        try {
          decl.underlying = parseType(named[3]!, pkg, imports);
        } catch (e) {
          decl.unreadable = e instanceof Error ? e.message : String(e);
          decl.underlying = { kind: 'interface' };
        }
        types.set(named[1]!, decl);
      }
    }
    comments = [];
  }
}

/** Reads struct fields from `start` to the closing `}`; returns the index of that line. */
function parseStruct(lines: string[], start: number, pkg: string, imports: ReadonlyMap<string, string>, out: GoField[]): number {
  let comments: string[] = [];
  for (let i = start; i < lines.length; i++) {
    const raw = lines[i]!;
    const line = raw.trim();
    if (line === '}') return i;
    if (line.startsWith('//')) {
      comments.push(line.replace(/^\/\/ ?/, ''));
      continue;
    }
    if (line === '') {
      comments = [];
      continue;
    }
    const m = /^(?:(\w+)\s+)?([^`]+?)\s*(`[^`]*`)?\s*(\/\/.*)?$/.exec(line);
    if (!m) throw new Error(`cannot parse struct field: ${raw}`);
    const type = parseType(m[2]!, pkg, imports);
    const embedded = m[1] === undefined;
    const name = embedded ? typeName(type) : m[1]!;
    out.push({ name, embedded, type, tags: parseTags(m[3] ?? ''), markers: markersOf(comments) });
    comments = [];
  }
  throw new Error('unterminated struct');
}

function typeName(t: GoType): string {
  if (t.kind === 'named') return t.name;
  if (t.kind === 'pointer') return typeName(t.elem);
  throw new Error('embedded field of an unnamed type');
}
