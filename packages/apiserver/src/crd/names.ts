/**
 * kube's NamingConditionController and EstablishingController, as one computation: which of a
 * CRD's requested names it may have (none another CRD of its group already holds), and its
 * NamesAccepted and Established conditions.
 */
import { isDeepStrictEqual } from 'node:util';
import type { CRD, CRDCondition, CRDNames } from './types.js';
import { conditionOf } from './types.js';

/** kube's equalToAcceptedOrFresh. */
function inUse(requested: string, accepted: string, used: ReadonlySet<string>): string | undefined {
  if (requested === accepted || !used.has(requested)) return undefined;
  return `${JSON.stringify(requested)} is already in use`;
}

/** The names every other CRD of the group holds (kube's getAcceptedNamesForGroup). */
function usedNames(crd: CRD, all: Iterable<CRD>): { resources: Set<string>; kinds: Set<string> } {
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const other of all) {
    if (other.spec.group !== crd.spec.group || other.metadata.name === crd.metadata.name) continue;
    const n = other.status?.acceptedNames;
    if (!n) continue;
    for (const r of [n.plural, n.singular ?? '', ...(n.shortNames ?? [])]) if (r) resources.add(r);
    for (const k of [n.kind, n.listKind ?? '']) if (k) kinds.add(k);
  }
  return { resources, kinds };
}

export interface NamingResult {
  acceptedNames: CRDNames;
  namesAccepted: CRDCondition;
  established: CRDCondition;
}

/**
 * The accepted names and conditions of `crd` among `all` CRDs. Once names are accepted the CRD is
 * Established (kube gets there in two writes: Installing, then InitialNamesAccepted); Established
 * never goes back to False.
 */
export function calculateNamesAndConditions(crd: CRD, all: Iterable<CRD>): NamingResult {
  const { resources, kinds } = usedNames(crd, all);
  const requested = crd.spec.names;
  const accepted: CRDNames = crd.status?.acceptedNames ?? { plural: '', kind: '' };
  const next: CRDNames = { ...accepted };
  let conflict: { reason: string; message: string } | undefined;
  const check = (reason: string, message: string | undefined, accept: () => void): void => {
    if (message) conflict = { reason, message };
    else accept();
  };
  check('PluralConflict', inUse(requested.plural, accepted.plural, resources), () => (next.plural = requested.plural));
  check('SingularConflict', inUse(requested.singular ?? '', accepted.singular ?? '', resources), () => {
    if (requested.singular) next.singular = requested.singular;
    else delete next.singular;
  });
  if (!isDeepStrictEqual(requested.shortNames ?? [], accepted.shortNames ?? [])) {
    const mine = new Set(accepted.shortNames ?? []);
    const errs = (requested.shortNames ?? []).filter((n) => !mine.has(n)).map((n) => inUse(n, '', resources)).filter((m): m is string => !!m);
    // utilerrors.NewAggregate: one message as is, several as `[a, b]`.
    const message = errs.length === 0 ? undefined : errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`;
    check('ShortNamesConflict', message, () => {
      if (requested.shortNames?.length) next.shortNames = requested.shortNames;
      else delete next.shortNames;
    });
  }
  check('KindConflict', inUse(requested.kind, accepted.kind, kinds), () => (next.kind = requested.kind));
  check('ListKindConflict', inUse(requested.listKind ?? '', accepted.listKind ?? '', kinds), () => {
    if (requested.listKind) next.listKind = requested.listKind;
    else delete next.listKind;
  });
  if (requested.categories?.length) next.categories = requested.categories;
  else delete next.categories;

  const namesAccepted: CRDCondition = conflict
    ? { type: 'NamesAccepted', status: 'False', reason: conflict.reason, message: conflict.message }
    : { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' };
  let established: CRDCondition = conditionOf(crd, 'Established') ?? { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' };
  if (established.status !== 'True' && namesAccepted.status === 'True') {
    established = { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' };
  }
  return { acceptedNames: next, namesAccepted, established };
}
