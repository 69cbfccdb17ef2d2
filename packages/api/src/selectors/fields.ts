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

/**
 * A served version's field selectors, as its resource module declares them (kube's
 * AddFieldLabelConversionFunc of the version and the storage's GetAttrs / ToSelectableFields).
 */
export interface FieldSelectorDefinition {
  /**
   * The field labels the version accepts, each with the storage version's name for it (the same
   * name, but for a version that names fields otherwise: events.k8s.io/v1 `regarding.name` is
   * `involvedObject.name`). Absent: kube's DefaultMetaV1FieldSelectorConversion (metadata.name
   * and metadata.namespace only, with its own message).
   */
  readonly labels?: ReadonlyMap<string, string>;
  /** Adds the resource's own selectable fields to the metadata fields (on the storage version). */
  readonly fields?: (obj: FieldSetSource, out: Record<string, string>) => void;
  /**
   * The field the watch cache indexes its watchers by (kube's TriggerFunc): a watch whose selector
   * requires `field=v` is offered only the events whose object had or has `v` there, so an event
   * costs the watchers it concerns, not every watcher (each kubelet watches its own pods and node).
   */
  readonly index?: WatchIndex;
}

/** A selectable field and how to read it off a stored object (see FieldSelectorDefinition.index). */
export interface WatchIndex {
  /** The field label, as the storage version names it. */
  readonly field: string;
  /** The field's value in `obj` ("" when absent), as the selectable field set has it. */
  readonly value: (obj: FieldSetSource) => string;
}

/** kube's metadata.name trigger (nodes, configmaps, secrets). */
export const NAME_WATCH_INDEX: WatchIndex = { field: 'metadata.name', value: (obj) => str(obj.metadata?.name) };

/** What the field selector functions read of a resource definition. */
export interface FieldSelectorTarget {
  readonly fieldSelector?: FieldSelectorDefinition | undefined;
}

/**
 * The `labels` of a FieldSelectorDefinition: a list of labels the storage names alike, or a map
 * from each label to the storage's.
 */
export function fieldLabels(labels: readonly string[] | Readonly<Record<string, string>>): ReadonlyMap<string, string> {
  return new Map(Array.isArray(labels) ? labels.map((l: string) => [l, l] as const) : Object.entries(labels));
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/**
 * The selectable fields of `obj` (kube's GetAttrs field set) for the storage definition `def`:
 * metadata.name, metadata.namespace for namespaced objects (when `namespaced` is omitted: when
 * the object carries a namespace; a cluster-scoped object matches it as "" either way), plus the
 * resource's own fields.
 */
export function objectFieldSet(def: FieldSelectorTarget, obj: FieldSetSource, namespaced?: boolean): Record<string, string> {
  const meta = obj.metadata;
  const out: Record<string, string> = { 'metadata.name': str(meta?.name) };
  const ns = str(meta?.namespace);
  if (namespaced ?? ns !== '') out['metadata.namespace'] = ns;
  def.fieldSelector?.fields?.(obj, out);
  return out;
}

/**
 * kube's `ConvertFieldLabel(gvk, label, value)` for a list/watch of `def` (a served version): the
 * label as the storage version's selectable fields name it. Throws SelectorParseError with kube's
 * message when the version does not support the label ("field label not supported: x" from a
 * version's own conversion func, or the default conversion's `"x" is not a known field selector:
 * only "metadata.name", "metadata.namespace"`).
 */
export function convertFieldLabel(def: FieldSelectorTarget, label: string, value: string): { label: string; value: string } {
  const labels = def.fieldSelector?.labels;
  if (labels === undefined) {
    if (label !== 'metadata.name' && label !== 'metadata.namespace') {
      throw new SelectorParseError(`${goQuote(label)} is not a known field selector: only "metadata.name", "metadata.namespace"`);
    }
    return { label, value };
  }
  const mapped = labels.get(label);
  if (mapped === undefined) throw new SelectorParseError(`field label not supported: ${label}`);
  return { label: mapped, value };
}

/**
 * The field label conversion check kube applies to a list/watch field selector (each label
 * through convertFieldLabel). Throws SelectorParseError.
 */
export function validateFieldSelector(def: FieldSelectorTarget, sel: FieldSelector): void {
  for (const r of sel.requirements) convertFieldLabel(def, r.field, r.value);
}

/**
 * A field selector of a request to `def`, checked and rewritten into the storage version's
 * labels (kube's `fieldSelector.Transform(ConvertFieldLabel)`), ready to match objectFieldSet of
 * stored objects. Throws SelectorParseError as convertFieldLabel.
 */
export function convertFieldSelector(def: FieldSelectorTarget, sel: FieldSelector): FieldSelector {
  if (sel.empty()) return sel;
  let changed = false;
  const reqs = sel.requirements.map((r) => {
    const c = convertFieldLabel(def, r.field, r.value);
    if (c.label === r.field) return r;
    changed = true;
    return Object.freeze({ field: c.label, operator: r.operator, value: c.value });
  });
  return changed ? new Selector(Object.freeze(reqs)) : sel;
}
