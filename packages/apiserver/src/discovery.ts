/**
 * Discovery documents as kube-apiserver 1.24 serves them: /api, /api/v1, /apis, /apis/<g>,
 * /apis/<g>/<v>, and /version. Built from the catalog, again after each change of it.
 * Aggregated discovery (apidiscovery.k8s.io/v2) is not served: clients that prefer it send JSON as a
 * fallback in Accept, and negotiation picks that, answering the legacy documents.
 */
import { apiVersionOf, isStored, storageVersionHash, type Catalog, type ResourceDefinition, type Verb } from '@plinth/api';

export interface VersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

export const VERSION: VersionInfo = {
  major: '1',
  minor: '24',
  gitVersion: 'v1.24.17+plinth',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-11-22T00:00:00Z',
  goVersion: `node${process.versions.node}`,
  compiler: 'tsc',
  platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
};

interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
  group?: string;
  version?: string;
}

function resourceEntries(def: ResourceDefinition, served: ReadonlySet<Verb>): APIResource[] {
  const main: APIResource = { name: def.plural, singularName: def.singular, namespaced: def.namespaced, kind: def.kind, verbs: def.verbs.filter((v) => served.has(v)) };
  if (def.shortNames.length) main.shortNames = [...def.shortNames];
  if (def.categories.length) main.categories = [...def.categories];
  // Only what is stored has a storage version (kube's StorageVersionProvider is the generic store).
  if (isStored(def)) main.storageVersionHash = storageVersionHash(def);
  const subs: APIResource[] = def.subresources.map((sub) => ({
    name: `${def.plural}/${sub.name}`,
    singularName: '',
    namespaced: def.namespaced,
    // A sub-resource of a kind of another group or version names them (kube's
    // GroupVersionKindProvider: pods/eviction, serviceaccounts/token; pods/binding names none).
    ...(sub.kind && (sub.kind.group !== def.group || sub.kind.version !== def.version) ? { group: sub.kind.group, version: sub.kind.version } : {}),
    kind: sub.kind?.kind ?? sub.connect?.kind ?? def.kind,
    verbs: sub.verbs.filter((v) => served.has(v)),
  }));
  return [main, ...subs];
}

/** The documents of one catalog generation, by path. */
function buildDocuments(catalog: Catalog, served: ReadonlySet<Verb>): { docs: Map<string, unknown>; coreVersions: string[] } {
  const docs = new Map<string, unknown>();
  const groups = catalog.groups();
  const groupEntries: unknown[] = [];
  for (const [group, versions] of groups) {
    for (const version of versions) {
      const defs = catalog.all().filter((d) => d.group === group && d.version === version);
      const gv = apiVersionOf({ group, version });
      const list = { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv, resources: defs.flatMap((d) => resourceEntries(d, served)) };
      docs.set(group ? `/apis/${group}/${version}` : `/api/${version}`, list);
    }
    if (!group) continue;
    const entry = {
      name: group,
      versions: versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v })),
      preferredVersion: { groupVersion: `${group}/${versions[0]}`, version: versions[0] },
    };
    groupEntries.push(entry);
    docs.set(`/apis/${group}`, { kind: 'APIGroup', apiVersion: 'v1', ...entry });
  }
  docs.set('/apis', { kind: 'APIGroupList', apiVersion: 'v1', groups: groupEntries });
  return { docs, coreVersions: groups.get('') ?? [] };
}

/** A request path without its trailing slashes: a loop, where `/\/+$/` backtracks quadratically. */
function trimTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path[end - 1] === '/') end--;
  return path.slice(0, end);
}

/**
 * Discovery over a catalog that changes (custom resources come and go): the documents are
 * rebuilt on the first request after a change, so a new group or version is discoverable at once.
 */
export function buildDiscovery(catalog: Catalog, served: ReadonlySet<Verb>, serverAddress: () => string): { get(path: string): unknown | undefined } {
  let built = buildDocuments(catalog, served);
  let generation = catalog.generation;
  return {
    get(path) {
      if (generation !== catalog.generation) {
        generation = catalog.generation;
        built = buildDocuments(catalog, served);
      }
      const p = path.length > 1 ? trimTrailingSlashes(path) : path;
      if (p === '/api') {
        return { kind: 'APIVersions', versions: built.coreVersions, serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: serverAddress() }] };
      }
      return built.docs.get(p);
    },
  };
}
