/**
 * `--admission-control-config-file`: kube's AdmissionConfiguration (apiserver.config.k8s.io/v1,
 * v1alpha1, and the older apiserver.k8s.io/v1alpha1), read at start-up as kube's
 * ReadAdmissionConfiguration does. Each `plugins[]` entry names a plugin and gives its
 * configuration inline (`configuration`) or in a file (`path`, relative to the configuration
 * file's directory). A plugin reads its entry with `PluginDeps.pluginConfig(name)`.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isPlainObject } from '@plinth/api';

const API_VERSIONS = new Set(['apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1alpha1', 'apiserver.k8s.io/v1alpha1']);

/** Plugin name → its configuration object (parsed YAML or JSON). */
export type AdmissionPluginConfigs = ReadonlyMap<string, Record<string, unknown>>;

function readDocument(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`unable to read ${what} from ${JSON.stringify(path)} [${e instanceof Error ? e.message : String(e)}]`);
  }
  try {
    // YAML is a superset of JSON: one parser reads both forms kube accepts. Aliases are refused
    // so a small file cannot expand into a huge document.
    return parseYaml(text, { maxAliasCount: 0 }) as unknown;
  } catch (e) {
    throw new Error(`unable to decode ${what} from ${JSON.stringify(path)} [${e instanceof Error ? e.message : String(e)}]`);
  }
}

/** Reads and checks the file; throws an Error whose message says what is wrong. */
export function loadAdmissionConfig(path: string): AdmissionPluginConfigs {
  const out = new Map<string, Record<string, unknown>>();
  if (!path) return out;
  const doc = readDocument(path, 'admission control configuration');
  if (doc === null || doc === undefined) return out;
  if (!isPlainObject(doc)) throw new Error(`admission control configuration ${JSON.stringify(path)}: expected an AdmissionConfiguration object`);
  const apiVersion = doc['apiVersion'];
  if (doc['kind'] !== 'AdmissionConfiguration' || typeof apiVersion !== 'string' || !API_VERSIONS.has(apiVersion)) {
    throw new Error(`admission control configuration ${JSON.stringify(path)}: expected kind AdmissionConfiguration of apiVersion ${[...API_VERSIONS].join(', ')}, got ${JSON.stringify(doc['kind'])} of ${JSON.stringify(apiVersion)}`);
  }
  const plugins = doc['plugins'] ?? [];
  if (!Array.isArray(plugins)) throw new Error(`admission control configuration ${JSON.stringify(path)}: plugins must be a list`);
  const base = dirname(path);
  plugins.forEach((p: unknown, i) => {
    if (!isPlainObject(p) || typeof p['name'] !== 'string' || p['name'] === '') throw new Error(`admission control configuration ${JSON.stringify(path)}: plugins[${i}].name is required`);
    const name = p['name'];
    let config: unknown;
    if (typeof p['path'] === 'string' && p['path'] !== '') {
      const file = isAbsolute(p['path']) ? p['path'] : join(base, p['path']);
      config = readDocument(file, `configuration of admission plugin ${name}`);
    } else {
      config = p['configuration'];
    }
    if (config === undefined || config === null) return;
    if (!isPlainObject(config)) throw new Error(`admission control configuration ${JSON.stringify(path)}: the configuration of plugin ${name} must be an object`);
    out.set(name, config);
  });
  return out;
}
