// Field selectors with kube's semantics (k8s.io/apimachinery/pkg/fields):
// ParseSelector's term splitting, value escaping and error texts, plus the
// per-resource selectable field sets (GetAttrs / *ToSelectableFields) and the
// field label conversion checks that reject unsupported fields.
import { SelectorParseError, goQuote } from './errors.js';

export { SelectorParseError } from './errors.js';

export type FieldOperator = '=' | '!=';

export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldOperator;
  /** Unescaped literal value. */
  readonly value: string;
}

export type Fields = Readonly<Record<string, string>>;

export interface FieldSelector {
  /** In kube's order: terms sorted by their raw text. */
  readonly requirements: readonly FieldRequirement[];
  /** A field absent from `fields` matches as the empty string. */
  matches(fields: Fields): boolean;
  empty(): boolean;
  /** Value when the selector contains `field=value` (or `field==value`). */
  requiresExactMatch(field: string): string | undefined;
  /** kube's String(): `f=v,g!=w` with values escaped. */
  toString(): string;
}

/** fields.EscapeValue: prefixes `\`, `,` and `=` with a backslash. */
export function escapeFieldValue(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    out += c === '\\' || c === ',' || c === '=' ? '\\' + c : c;
  }
  return out;
}

const needsUnescape = /[\\,=]/;

/**
 * fields.UnescapeValue. Throws SelectorParseError with kube's texts
 * ("invalid field selector: invalid escape sequence: \x",
 * "invalid field selector: unescaped character in value: 61" — kube prints the
 * code point of the offending rune).
 */
export function unescapeFieldValue(s: string): string {
  if (!needsUnescape.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw new SelectorParseError(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      out += c;
      inSlash = false;
      continue;
    }
    if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') {
      throw new SelectorParseError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else out += c;
  }
  if (inSlash) throw new SelectorParseError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Comma-separated terms; a backslash-escaped comma stays in its term. */
function splitTerms(s: string): string[] {
  if (s.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inSlash) inSlash = false;
    else if (c === 92) inSlash = true;
    else if (c === 44) {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

/** The first occurrence of !=, == or = (tried in that order at each index). */
function splitTerm(term: string): [string, FieldOperator, string] | undefined {
  for (let i = 0; i < term.length; i++) {
    if (term.startsWith('!=', i)) return [term.slice(0, i), '!=', term.slice(i + 2)];
    if (term.startsWith('==', i)) return [term.slice(0, i), '=', term.slice(i + 2)];
    if (term.startsWith('=', i)) return [term.slice(0, i), '=', term.slice(i + 1)];
  }
  return undefined;
}

class Selector implements FieldSelector {
  constructor(readonly requirements: readonly FieldRequirement[]) {}
  matches(fields: Fields): boolean {
    const rs = this.requirements;
    for (let i = 0; i < rs.length; i++) {
      const r = rs[i]!;
      const v = Object.hasOwn(fields, r.field) ? fields[r.field] : '';
      if ((v === r.value) !== (r.operator === '=')) return false;
    }
    return true;
  }
  empty(): boolean {
    return this.requirements.length === 0;
  }
  requiresExactMatch(field: string): string | undefined {
    for (const r of this.requirements) if (r.field === field && r.operator === '=') return r.value;
    return undefined;
  }
  toString(): string {
    return this.requirements.map((r) => r.field + r.operator + escapeFieldValue(r.value)).join(',');
  }
}

const everything: FieldSelector = new Selector([]);

/** fields.Everything(). */
export function everythingFieldSelector(): FieldSelector {
  return everything;
}

/**
 * fields.ParseSelector: comma-separated `field=value`, `field==value` or
 * `field!=value` terms; empty terms are ignored, so "" selects everything.
 */
export function parseFieldSelector(text: string): FieldSelector {
  const parts = splitTerms(text).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const reqs: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const split = splitTerm(part);
    if (split === undefined) throw new SelectorParseError(`invalid selector: '${text}'; can't understand '${part}'`);
    const [field, operator, raw] = split;
    reqs.push(Object.freeze({ field, operator, value: unescapeFieldValue(raw) }));
  }
  return reqs.length === 0 ? everything : new Selector(Object.freeze(reqs));
}

// ---- per-resource selectable fields ----------------------------------------

/** The parts of an object the selectable field sets read. */
export interface FieldSetSource {
  metadata?: { name?: string; namespace?: string } | null;
  [field: string]: unknown;
}

export interface FieldSelectorRules {
  /**
   * Field labels accepted by the resource's conversion func; undefined means
   * the resource has none and kube's DefaultMetaV1FieldSelectorConversion
   * applies (metadata.name and metadata.namespace only, with its own message).
   */
  readonly supported?: ReadonlySet<string>;
  /** Adds resource-specific fields to the metadata fields. */
  readonly extra?: (obj: FieldSetSource, out: Record<string, string>) => void;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function child(v: unknown, key: string): unknown {
  return v !== null && typeof v === 'object' && Object.hasOwn(v, key) ? (v as Record<string, unknown>)[key] : undefined;
}

const rules = new Map<string, FieldSelectorRules>([
  // SecretToSelectableFields; AddFieldLabelConversionsForSecret.
  ['secrets', {
    supported: new Set(['type', 'metadata.namespace', 'metadata.name']),
    extra: (obj, out) => { out['type'] = str(obj['type']); },
  }],
  // NamespaceToSelectableFields (incl. kube's backward-compatible "name" key,
  // unreachable through the v1 conversion func); AddFieldLabelConversionsForNamespace.
  ['namespaces', {
    supported: new Set(['status.phase', 'metadata.name']),
    extra: (obj, out) => {
      out['status.phase'] = str(child(obj['status'], 'phase'));
      out['name'] = str(child(obj['metadata'], 'name'));
    },
  }],
  // ServiceAccounts, ConfigMaps, Leases: no conversion func, default attrs only.
  ['serviceaccounts', {}],
  // Events (core/v1, the storage of every Event version): pkg/registry/core/event
  // ToSelectableFields; AddFieldLabelConversionsForEvent (core/v1).
  ['events', {
    supported: new Set([
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
      'metadata.namespace',
      'metadata.name',
    ]),
    extra: (obj, out) => {
      const involved = obj['involvedObject'];
      for (const f of ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath']) {
        out[`involvedObject.${f}`] = str(child(involved, f));
      }
      out['reason'] = str(obj['reason']);
      // The core/v1 JSON name of the internal ReportingController.
      out['reportingComponent'] = str(obj['reportingComponent']);
      out['source'] = str(child(obj['source'], 'component')) || str(obj['reportingComponent']);
      out['type'] = str(obj['type']);
    },
  }],
  ['configmaps', {}],
  ['leases', {}],
]);

/**
 * Registers (or replaces) the selectable fields of a resource, for resources
 * added later whose kube counterparts define *ToSelectableFields and a field
 * label conversion func.
 */
export function registerFieldSelectorRules(resource: string, r: FieldSelectorRules): void {
  rules.set(resource, r);
}

/**
 * The selectable fields of `obj` (kube's GetAttrs field set): metadata.name,
 * metadata.namespace for namespaced objects (when `namespaced` is omitted:
 * when the object carries a namespace; a cluster-scoped object matches it as
 * "" either way), plus resource-specific fields.
 */
export function objectFieldSet(resource: string, obj: FieldSetSource, namespaced?: boolean): Record<string, string> {
  const meta = obj.metadata;
  const out: Record<string, string> = { 'metadata.name': str(meta?.name) };
  const ns = str(meta?.namespace);
  if (namespaced ?? ns !== '') out['metadata.namespace'] = ns;
  rules.get(resource)?.extra?.(obj, out);
  return out;
}

/**
 * The field label conversion check kube applies to a list/watch field
 * selector. Throws SelectorParseError, e.g. "field label not supported: spec.x"
 * for resources with a conversion func (secrets, namespaces), and
 * `"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"`
 * for resources using kube's default (e.g. serviceaccounts, configmaps).
 */
export function validateFieldSelector(resource: string, sel: FieldSelector): void {
  const supported = rules.get(resource)?.supported;
  for (const r of sel.requirements) {
    if (supported === undefined) {
      if (r.field !== 'metadata.name' && r.field !== 'metadata.namespace') {
        throw new SelectorParseError(
          `${goQuote(r.field)} is not a known field selector: only "metadata.name", "metadata.namespace"`,
        );
      }
    } else if (!supported.has(r.field)) {
      throw new SelectorParseError(`field label not supported: ${r.field}`);
    }
  }
}

// ---- per-version field label conversion -------------------------------------

/** A served version's resource, as the conversion registry knows it. */
export interface FieldLabelTarget {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

/**
 * kube's field label conversion func of one served version: the storage's label for `label`
 * (value unchanged), or undefined when the label is not supported.
 */
export type FieldLabelConversion = (label: string) => string | undefined;

const conversions = new Map<string, FieldLabelConversion>();

const targetKey = (t: FieldLabelTarget): string => `${t.group}/${t.version}/${t.plural}`;

/** The key the selectable field rules of a resource are registered under: `plural`, or `plural.group`. */
function rulesKey(t: FieldLabelTarget): string {
  return t.group ? `${t.plural}.${t.group}` : t.plural;
}

/** Registers the field label conversion of a served version whose labels differ from the storage's. */
export function registerFieldLabelConversion(target: FieldLabelTarget, conversion: FieldLabelConversion): void {
  conversions.set(targetKey(target), conversion);
}

// events.k8s.io/v1 Event (pkg/apis/events/v1/conversion.go AddFieldLabelConversionsForEvent):
// its field names map onto core/v1's ToSelectableFields. events.k8s.io/v1beta1 registers none in
// kube 1.24, so it gets the default (metadata.name and metadata.namespace only).
const EVENTS_V1_LABELS: Readonly<Record<string, string>> = {
  'reason': 'reason',
  'regarding.kind': 'involvedObject.kind',
  'regarding.namespace': 'involvedObject.namespace',
  'regarding.name': 'involvedObject.name',
  'regarding.uid': 'involvedObject.uid',
  'regarding.apiVersion': 'involvedObject.apiVersion',
  'regarding.resourceVersion': 'involvedObject.resourceVersion',
  'regarding.fieldPath': 'involvedObject.fieldPath',
  'reportingController': 'reportingComponent',
  'source': 'source',
  'type': 'type',
  'metadata.namespace': 'metadata.namespace',
  'metadata.name': 'metadata.name',
};
registerFieldLabelConversion({ group: 'events.k8s.io', version: 'v1', plural: 'events' }, (label) =>
  Object.hasOwn(EVENTS_V1_LABELS, label) ? EVENTS_V1_LABELS[label] : undefined,
);

/**
 * kube's `ConvertFieldLabel(gvk, label, value)` for a list/watch of `target` (a served version):
 * the label as the storage version's selectable fields name it. Throws SelectorParseError with
 * kube's message when the version does not support the label ("field label not supported: x",
 * or the default conversion's `"x" is not a known field selector: only ...`).
 */
export function convertFieldLabel(target: FieldLabelTarget, label: string, value: string): { label: string; value: string } {
  const conv = conversions.get(targetKey(target));
  if (conv) {
    const mapped = conv(label);
    if (mapped === undefined) throw new SelectorParseError(`field label not supported: ${label}`);
    return { label: mapped, value };
  }
  validateFieldSelector(rulesKey(target), new Selector([{ field: label, operator: '=', value }]));
  return { label, value };
}

/**
 * A field selector of a request to `target`, checked and rewritten into the storage version's
 * labels (kube's `fieldSelector.Transform(ConvertFieldLabel)`), ready to match objectFieldSet of
 * stored objects. Throws SelectorParseError as convertFieldLabel.
 */
export function convertFieldSelector(target: FieldLabelTarget, sel: FieldSelector): FieldSelector {
  if (sel.empty()) return sel;
  let changed = false;
  const reqs = sel.requirements.map((r) => {
    const c = convertFieldLabel(target, r.field, r.value);
    if (c.label === r.field) return r;
    changed = true;
    return Object.freeze({ field: c.label, operator: r.operator, value: c.value });
  });
  return changed ? new Selector(Object.freeze(reqs)) : sel;
}
