/**
 * YAML numbers as kube reads a YAML body: sigs.k8s.io/yaml resolves scalars with go-yaml v2 and
 * writes the result as JSON, which kube's JSON decoder reads (api/src/number-codec.ts). So:
 * - an integer is exact: an int64 above 2^53 is a BigInt, a larger integer a float64;
 * - a float beyond float64 does not resolve as a float in go-yaml: it stays the string it is
 *   (`1e999` is the string "1e999");
 * - `.inf` and `.nan` resolve, but JSON cannot write them: the body is refused
 *   (`json: unsupported value: +Inf`).
 */
import type { ScalarTag, Tags } from 'yaml';
import { INT64_MAX, INT64_MIN } from '@plinth/api';

const INT = 'tag:yaml.org,2002:int';
const FLOAT = 'tag:yaml.org,2002:float';

/** A decimal integer: int64 exactly, else (uint64 and beyond) a float64, else the text. */
function resolveInt(text: string): number | bigint | string {
  const n = Number(text);
  if (Number.isSafeInteger(n)) return n;
  const digits = text.startsWith('+') ? text.slice(1) : text;
  if (digits.length <= 20) {
    const b = BigInt(digits);
    if (b >= INT64_MIN && b <= INT64_MAX) return b;
  }
  return Number.isFinite(n) ? n : text;
}

/** A float: the text when float64 cannot hold it (go-yaml's ParseFloat fails: a string). */
function resolveFloat(text: string): number | string {
  const n = parseFloat(text);
  return Number.isFinite(n) ? n : text;
}

/** .inf and .nan: sigs.k8s.io/yaml's json.Marshal refuses them. */
function refuseNonFinite(text: string): never {
  const v = parseFloat(text.replace(/\.(inf|Inf|INF)/, 'Infinity'));
  throw new Error(`json: unsupported value: ${Number.isNaN(v) ? 'NaN' : v > 0 ? '+Inf' : '-Inf'}`);
}

/** The YAML core schema's number tags with kube's resolution (Composer's `customTags`). */
export function withKubeNumbers(tags: Tags): Tags {
  return tags.map((t) => {
    if (typeof t !== 'object' || !('test' in t)) return t;
    const tag = t as ScalarTag;
    const test = tag.test;
    if (!test) return t;
    if (tag.tag === INT && !tag.format) return { ...tag, resolve: resolveInt };
    if (tag.tag === FLOAT && tag.format === 'EXP') return { ...tag, resolve: resolveFloat };
    if (tag.tag === FLOAT && !tag.format) return { ...tag, resolve: test.test('.inf') || test.test('.nan') ? refuseNonFinite : resolveFloat };
    return t;
  });
}
