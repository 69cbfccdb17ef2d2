/**
 * kube's RBAC authorizer (plugin/pkg/auth/authorizer/rbac/rbac.go) over kube's rule resolver
 * (pkg/registry/rbac/validation/rule.go): the ClusterRoleBindings that apply to the user, then the
 * RoleBindings of the request's namespace; a binding grants its Role's (same namespace) or
 * ClusterRole's rules. Any rule that allows the request allows it; otherwise RBAC has no opinion,
 * with the roles it could not find as the reason.
 *
 * The objects come from a {@link RBACSource} (the apiserver's watch-cache informers) into an
 * in-memory index of bindings by subject — user name (service accounts by their user name) and
 * group — so a decision reads only the bindings naming the user or one of its groups: no etcd read,
 * no scan of every binding.
 */
import type { StoredObject, UserInfo } from '@plinth/api';
import type { Attributes, Authorizer, Decision, PolicyRule, RulesResult } from '../authorizer.js';
import { serviceAccountUsername } from '../serviceaccount/claims.js';
import { ruleAllows, type RoleRef, type Subject } from './rules.js';

export type RBACKind = 'roles' | 'clusterroles' | 'rolebindings' | 'clusterrolebindings';

export const RBAC_KINDS: readonly RBACKind[] = ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'];

/** What the source delivers for one kind. */
export interface RBACHandlers {
  /** Everything there is (the first list, and every relist): replaces what was known. */
  replace(objects: StoredObject[]): void;
  /** An object added or modified. */
  upsert(object: StoredObject): void;
  /** An object deleted. */
  remove(object: StoredObject): void;
}

/**
 * Where the authorizer reads Roles, ClusterRoles and their bindings: a list-then-watch per kind.
 * `subscribe` returns a function that stops delivery.
 */
export interface RBACSource {
  subscribe(kind: RBACKind, handlers: RBACHandlers): () => void;
}

interface Binding {
  /** The binding's name (unique within its index: one per namespace, one for the cluster). */
  key: string;
  namespace: string;
  roleRef: RoleRef;
}

/** Bindings by the user names and groups their subjects name: the index form of subjectAppliesTo (rules.ts). */
class BindingIndex {
  readonly byKey = new Map<string, { binding: Binding; users: string[]; groups: string[] }>();
  readonly byUser = new Map<string, Set<Binding>>();
  readonly byGroup = new Map<string, Set<Binding>>();

  add(binding: Binding, subjects: Subject[]): void {
    this.remove(binding.key);
    const users: string[] = [];
    const groups: string[] = [];
    for (const s of subjects) {
      if (s.kind === 'User') users.push(s.name);
      else if (s.kind === 'Group') groups.push(s.name);
      else if (s.kind === 'ServiceAccount') {
        // kube's appliesToUser: the binding's namespace when the subject names none; a
        // ClusterRoleBinding's service account without a namespace matches no one.
        const ns = s.namespace || binding.namespace;
        if (ns) users.push(serviceAccountUsername(ns, s.name));
      }
    }
    this.byKey.set(binding.key, { binding, users, groups });
    for (const u of users) addTo(this.byUser, u, binding);
    for (const g of groups) addTo(this.byGroup, g, binding);
  }

  remove(key: string): void {
    const e = this.byKey.get(key);
    if (!e) return;
    this.byKey.delete(key);
    for (const u of e.users) removeFrom(this.byUser, u, e.binding);
    for (const g of e.groups) removeFrom(this.byGroup, g, e.binding);
  }

  clear(): void {
    this.byKey.clear();
    this.byUser.clear();
    this.byGroup.clear();
  }
}

function addTo(m: Map<string, Set<Binding>>, k: string, b: Binding): void {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(b);
}

function removeFrom(m: Map<string, Set<Binding>>, k: string, b: Binding): void {
  const s = m.get(k);
  if (!s) return;
  s.delete(b);
  if (s.size === 0) m.delete(k);
}

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** The rules of a stored Role/ClusterRole (absent lists as empty ones). */
export function rulesOf(obj: StoredObject): PolicyRule[] {
  const raw = (obj as { rules?: unknown }).rules;
  if (!Array.isArray(raw)) return [];
  return raw.map((r: Record<string, unknown>) => ({
    verbs: stringList(r['verbs']),
    apiGroups: stringList(r['apiGroups']),
    resources: stringList(r['resources']),
    resourceNames: stringList(r['resourceNames']),
    nonResourceURLs: stringList(r['nonResourceURLs']),
  }));
}

function subjectsOf(obj: StoredObject): Subject[] {
  const raw = (obj as { subjects?: unknown }).subjects;
  if (!Array.isArray(raw)) return [];
  return raw.filter((s): s is Subject => typeof s === 'object' && s !== null && typeof s.kind === 'string' && typeof s.name === 'string');
}

function roleRefOf(obj: StoredObject): RoleRef {
  const r = ((obj as { roleRef?: Partial<RoleRef> }).roleRef ?? {}) as Partial<RoleRef>;
  return { apiGroup: r.apiGroup ?? '', kind: r.kind ?? '', name: r.name ?? '' };
}

/** kube's utilerrors.NewAggregate(...).Error(): one message alone, several deduplicated in brackets. */
export function aggregateMessage(messages: readonly string[]): string {
  const seen = [...new Set(messages)];
  return seen.length === 1 ? seen[0]! : `[${seen.join(', ')}]`;
}

export interface RBACAuthorizer extends Authorizer {
  /** Synchronous: everything is in memory. */
  authorize(a: Attributes): Decision;
  rulesFor(user: UserInfo, namespace: string): RulesResult;
  /** Resolves once every kind has been listed (until then, bindings may be missing). */
  readonly synced: Promise<void>;
}

const NO_OPINION: Decision = { decision: 'no-opinion' };

export function createRBACAuthorizer(opts: { source: RBACSource }): RBACAuthorizer {
  const clusterRoles = new Map<string, PolicyRule[]>();
  /** namespace → name → rules. */
  const roles = new Map<string, Map<string, PolicyRule[]>>();
  const clusterBindings = new BindingIndex();
  /** namespace → its RoleBindings. */
  const roleBindings = new Map<string, BindingIndex>();

  const nsOf = (o: StoredObject): string => o.metadata.namespace ?? '';
  const nameOf = (o: StoredObject): string => o.metadata.name ?? '';
  const setRole = (o: StoredObject): void => {
    const ns = nsOf(o);
    let m = roles.get(ns);
    if (!m) roles.set(ns, (m = new Map()));
    m.set(nameOf(o), rulesOf(o));
  };
  const deleteRole = (o: StoredObject): void => {
    const m = roles.get(nsOf(o));
    m?.delete(nameOf(o));
    if (m?.size === 0) roles.delete(nsOf(o));
  };
  const setRoleBinding = (o: StoredObject): void => {
    const ns = nsOf(o);
    let idx = roleBindings.get(ns);
    if (!idx) roleBindings.set(ns, (idx = new BindingIndex()));
    idx.add({ key: nameOf(o), namespace: ns, roleRef: roleRefOf(o) }, subjectsOf(o));
  };
  const deleteRoleBinding = (o: StoredObject): void => {
    const idx = roleBindings.get(nsOf(o));
    idx?.remove(nameOf(o));
    if (idx?.byKey.size === 0) roleBindings.delete(nsOf(o));
  };
  const setClusterBinding = (o: StoredObject): void => clusterBindings.add({ key: nameOf(o), namespace: '', roleRef: roleRefOf(o) }, subjectsOf(o));

  const handlers: Record<RBACKind, RBACHandlers> = {
    clusterroles: {
      replace: (objs) => {
        clusterRoles.clear();
        for (const o of objs) clusterRoles.set(nameOf(o), rulesOf(o));
      },
      upsert: (o) => clusterRoles.set(nameOf(o), rulesOf(o)),
      remove: (o) => clusterRoles.delete(nameOf(o)),
    },
    roles: {
      replace: (objs) => {
        roles.clear();
        for (const o of objs) setRole(o);
      },
      upsert: setRole,
      remove: deleteRole,
    },
    clusterrolebindings: {
      replace: (objs) => {
        clusterBindings.clear();
        for (const o of objs) setClusterBinding(o);
      },
      upsert: setClusterBinding,
      remove: (o) => clusterBindings.remove(nameOf(o)),
    },
    rolebindings: {
      replace: (objs) => {
        roleBindings.clear();
        for (const o of objs) setRoleBinding(o);
      },
      upsert: setRoleBinding,
      remove: deleteRoleBinding,
    },
  };

  let resolveSynced!: () => void;
  const synced = new Promise<void>((r) => (resolveSynced = r));
  const listed = new Set<RBACKind>();
  const stops = RBAC_KINDS.map((kind) =>
    opts.source.subscribe(kind, {
      ...handlers[kind],
      replace(objs) {
        handlers[kind].replace(objs);
        listed.add(kind);
        if (listed.size === RBAC_KINDS.length) resolveSynced();
      },
    }),
  );

  /** kube's GetRoleReferenceRules: the rules, or why there are none. */
  const rulesOfRef = (ref: RoleRef, bindingNamespace: string): PolicyRule[] | string => {
    if (ref.kind === 'ClusterRole') return clusterRoles.get(ref.name) ?? `clusterrole.rbac.authorization.k8s.io ${JSON.stringify(ref.name)} not found`;
    if (ref.kind === 'Role') return roles.get(bindingNamespace)?.get(ref.name) ?? `role.rbac.authorization.k8s.io ${JSON.stringify(ref.name)} not found`;
    return `unsupported role reference kind: ${JSON.stringify(ref.kind)}`;
  };

  const anyAllows = (set: Set<Binding> | undefined, a: Attributes): Binding | undefined => {
    if (!set) return undefined;
    for (const b of set) {
      const rules = rulesOfRef(b.roleRef, b.namespace);
      if (typeof rules === 'string') continue;
      for (const r of rules) if (ruleAllows(a, r)) return b;
    }
    return undefined;
  };
  /** The reason of an allow, as kube's authorizingVisitor words it ("RBAC: allowed by ..."). */
  const allowedBy = (b: Binding, subject: string): Decision => {
    const what = b.namespace ? `RoleBinding ${JSON.stringify(`${b.key}/${b.namespace}`)}` : `ClusterRoleBinding ${JSON.stringify(b.key)}`;
    return { decision: 'allow', reason: `RBAC: allowed by ${what} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${subject}` };
  };
  const indexAllows = (idx: BindingIndex | undefined, a: Attributes): Decision | undefined => {
    if (!idx) return undefined;
    const byUser = anyAllows(idx.byUser.get(a.user.name), a);
    if (byUser) {
      const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(a.user.name);
      return allowedBy(byUser, sa ? `ServiceAccount ${JSON.stringify(`${sa[2]}/${sa[1]}`)}` : `User ${JSON.stringify(a.user.name)}`);
    }
    for (const g of a.user.groups) {
      const byGroup = anyAllows(idx.byGroup.get(g), a);
      if (byGroup) return allowedBy(byGroup, `Group ${JSON.stringify(g)}`);
    }
    return undefined;
  };

  /** The bindings that apply to the user, each once: cluster bindings first, as kube visits them. */
  const bindingsFor = (user: UserInfo, namespace: string): Binding[] => {
    const out = new Set<Binding>();
    const collect = (idx: BindingIndex | undefined): void => {
      if (!idx) return;
      for (const b of idx.byUser.get(user.name) ?? []) out.add(b);
      for (const g of user.groups) for (const b of idx.byGroup.get(g) ?? []) out.add(b);
    };
    collect(clusterBindings);
    if (namespace) collect(roleBindings.get(namespace));
    return [...out];
  };

  return {
    synced,
    authorize(a) {
      const allowed = indexAllows(clusterBindings, a) ?? (a.namespace ? indexAllows(roleBindings.get(a.namespace), a) : undefined);
      if (allowed) return allowed;
      // Denied: the reason names the roles that could not be found (kube's visitor errors).
      const errors: string[] = [];
      for (const b of bindingsFor(a.user, a.namespace)) {
        const rules = rulesOfRef(b.roleRef, b.namespace);
        if (typeof rules === 'string') errors.push(rules);
      }
      return errors.length > 0 ? { decision: 'no-opinion', reason: `RBAC: ${aggregateMessage(errors)}` } : NO_OPINION;
    },
    rulesFor(user, namespace) {
      const out: RulesResult = { resourceRules: [], nonResourceRules: [], incomplete: false };
      const errors: string[] = [];
      for (const b of bindingsFor(user, namespace)) {
        const rules = rulesOfRef(b.roleRef, b.namespace);
        if (typeof rules === 'string') {
          errors.push(rules);
          continue;
        }
        for (const r of rules) {
          if (r.resources && r.resources.length > 0) out.resourceRules.push({ verbs: [...r.verbs], apiGroups: [...(r.apiGroups ?? [])], resources: [...r.resources], resourceNames: [...(r.resourceNames ?? [])] });
          if (r.nonResourceURLs && r.nonResourceURLs.length > 0) out.nonResourceRules.push({ verbs: [...r.verbs], nonResourceURLs: [...r.nonResourceURLs] });
        }
      }
      if (errors.length > 0) {
        out.incomplete = true;
        out.evaluationError = aggregateMessage(errors);
      }
      return out;
    },
    close() {
      for (const stop of stops) stop();
    },
  };
}
