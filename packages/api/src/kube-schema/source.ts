/**
 * The pinned schema source (`packages/api/schema/kube-1.24.17.json`, written by
 * tools/kube-schema/generate.ts from kube's Go API packages): read once, on first use, and shared
 * by everything derived from it (decoding, OpenAPI, Protobuf, server-side apply, patches).
 */
import { readFileSync } from 'node:fs';
import type { DefinitionFacts, GroupVersionKind, KubeSchemaFile } from './format.js';

/** The release whose API types plinth serves. */
export const KUBE_SCHEMA_VERSION = '1.24.17';

/** The file, relative to this module compiled (packages/api/dist/kube-schema/). */
const FILE = new URL(`../../schema/kube-${KUBE_SCHEMA_VERSION}.json`, import.meta.url);

/** kube's OpenAPI name of meta/v1 ObjectMeta: what every kind's `metadata` refers to. */
export const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
export const META_V1_PREFIX = 'io.k8s.apimachinery.pkg.apis.meta.v1.';

let file: KubeSchemaFile | undefined;
let byKind: Map<string, string> | undefined;

/** The parsed schema file (read on first use). */
export function kubeSchema(): KubeSchemaFile {
  file ??= JSON.parse(readFileSync(FILE, 'utf8')) as KubeSchemaFile;
  return file;
}

const gvkKey = (g: GroupVersionKind): string => `${g.group}/${g.version}/${g.kind}`;

/** The definition name of a registered kind, or undefined when kube 1.24 has no such kind. */
export function definitionNameOfKind(gvk: GroupVersionKind): string | undefined {
  if (!byKind) {
    byKind = new Map();
    for (const [name, def] of Object.entries(kubeSchema().definitions)) {
      for (const g of def.gvk ?? []) if (!byKind.has(gvkKey(g))) byKind.set(gvkKey(g), name);
    }
  }
  return byKind.get(gvkKey(gvk));
}

/** The facts of a definition by its name; throws when the file has none (a programming error). */
export function definitionFacts(name: string): DefinitionFacts {
  const d = Object.hasOwn(kubeSchema().definitions, name) ? kubeSchema().definitions[name] : undefined;
  if (!d) throw new Error(`kube schema: no definition ${name}`);
  return d;
}
