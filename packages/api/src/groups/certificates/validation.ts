/**
 * certificates.k8s.io/v1 CertificateSigningRequest validation as kube 1.24 has it
 * (pkg/apis/certificates/validation): the request parsed and its signature checked, usages
 * required, known and unique, signerName required and well-formed (legacy-unknown refused),
 * expirationSeconds ≥ 600, conditions without duplicates or both Approved and Denied,
 * status.certificate only CERTIFICATE PEM blocks — each rule relaxed for stored objects that
 * already break it, as kube's getValidationOptions does.
 */
import { type FieldError, GoLiteral, fieldErr } from '../../field-errors.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../validation.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { describeChange, semanticEqual } from '../core/validation/semantic.js';
import { certificatePemProblem, parseCertificateRequest } from './csr-parse.js';

export const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';

const VALID_USAGES = [
  'any', 'cert sign', 'client auth', 'code signing', 'content commitment', 'crl sign', 'data encipherment',
  'decipher only', 'digital signature', 'email protection', 'encipher only', 'ipsec end system', 'ipsec tunnel',
  'ipsec user', 'key agreement', 'key encipherment', 'microsoft sgc', 'netscape sgc', 'ocsp signing', 's/mime',
  'server auth', 'signing', 'timestamping',
];
const TRUE_ONLY_TYPES = new Set(['Approved', 'Denied', 'Failed']);

interface Condition {
  type: string;
  status: string;
  raw: Record<string, unknown>;
}

const specOf = (o: StoredObject): Record<string, unknown> => (isPlainObject(o['spec']) ? o['spec'] : {});
const statusOf = (o: StoredObject): Record<string, unknown> => (isPlainObject(o['status']) ? o['status'] : {});
const usagesOf = (o: StoredObject): string[] => (Array.isArray(specOf(o)['usages']) ? (specOf(o)['usages'] as unknown[]).map(String) : []);
const signerOf = (o: StoredObject): string => String(specOf(o)['signerName'] ?? '');

/** The conditions of a request. */
export function conditionsOf(o: StoredObject): Condition[] {
  const list = statusOf(o)['conditions'];
  return Array.isArray(list) ? list.filter(isPlainObject).map((c) => ({ type: String(c['type'] ?? ''), status: String(c['status'] ?? ''), raw: c })) : [];
}

/** A []byte field (base64 in JSON) as text. */
export function bytesText(v: unknown): string {
  return typeof v === 'string' ? Buffer.from(v, 'base64').toString('latin1') : '';
}

/** Go's `%#v` of a []byte. */
function goBytes(v: unknown): GoLiteral {
  const b = typeof v === 'string' ? Buffer.from(v, 'base64') : Buffer.alloc(0);
  return new GoLiteral(b.length === 0 ? '[]byte(nil)' : `[]byte{${[...b].map((x) => `0x${x.toString(16)}`).join(', ')}}`);
}

interface Options {
  allowSettingApprovalConditions: boolean;
  allowSettingCertificate: boolean;
  allowBothApprovedAndDenied: boolean;
  allowLegacySignerName: boolean;
  allowDuplicateConditionTypes: boolean;
  allowEmptyConditionType: boolean;
  allowArbitraryCertificate: boolean;
  allowUnknownUsages: boolean;
  allowDuplicateUsages: boolean;
}

const hasDuplicates = (xs: string[]): boolean => new Set(xs).size !== xs.length;

function optionsFor(obj: StoredObject, old: StoredObject | undefined): Options {
  const oldTypes = old ? conditionsOf(old).map((c) => c.type) : [];
  const oldCert = old ? bytesText(statusOf(old)['certificate']) : '';
  return {
    allowSettingApprovalConditions: false,
    allowSettingCertificate: false,
    allowBothApprovedAndDenied: oldTypes.includes('Approved') && oldTypes.includes('Denied'),
    allowLegacySignerName: old !== undefined && signerOf(old) === LEGACY_UNKNOWN_SIGNER,
    allowDuplicateConditionTypes: hasDuplicates(oldTypes),
    allowEmptyConditionType: oldTypes.includes(''),
    allowArbitraryCertificate: old !== undefined && (bytesText(statusOf(obj)['certificate']) === oldCert || certificatePemProblem(oldCert) !== ''),
    allowUnknownUsages: old !== undefined && usagesOf(old).some((u) => !VALID_USAGES.includes(u)),
    allowDuplicateUsages: old !== undefined && hasDuplicates(usagesOf(old)),
  };
}

/** kube's ValidateCertificateSigningRequestSignerName. */
export function validateSignerName(path: string, name: string): FieldError[] {
  if (!name) return [fieldErr.required(path, 'signerName must be provided')];
  const segments = name.split('/');
  if (segments.length !== 2) return [fieldErr.invalid(path, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const [domain, rest] = segments as [string, string];
  const errs: FieldError[] = [];
  if (domain.length > 253) errs.push(fieldErr.tooLong(path, domain, 253));
  const labels = domain.split('.');
  for (const l of labels) {
    const msgs = isDNS1123Label(l);
    if (msgs.length === 0) continue;
    for (const m of msgs) errs.push(fieldErr.invalid(path, domain, `validating label ${JSON.stringify(l)}: ${m}`));
    break;
  }
  if (labels.length < 2) errs.push(fieldErr.invalid(path, domain, 'should be a domain with at least two segments separated by dots'));
  for (const l of rest.split('.')) {
    const msgs = isDNS1123Subdomain(l);
    if (msgs.length === 0) continue;
    for (const m of msgs) errs.push(fieldErr.invalid(path, rest, `validating label ${JSON.stringify(l)}: ${m}`));
    break;
  }
  const max = 253 + (253 + 63 + 1) + 1;
  if (name.length > max) errs.push(fieldErr.tooLong(path, name, max));
  return errs;
}

function validateConditions(obj: StoredObject, opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditionsOf(obj).forEach((c, i) => {
    const path = `status.conditions[${i}]`;
    if (!opts.allowEmptyConditionType && !c.type) errs.push(fieldErr.required(`${path}.type`, ''));
    const allowed = TRUE_ONLY_TYPES.has(c.type) ? ['True'] : ['False', 'True', 'Unknown'];
    if (!c.status) errs.push(fieldErr.required(`${path}.status`, ''));
    else if (!allowed.includes(c.status)) errs.push(fieldErr.notSupported(`${path}.status`, c.status, allowed));
    if (!opts.allowBothApprovedAndDenied) {
      if (c.type === 'Approved') {
        approved = true;
        if (denied) errs.push(fieldErr.invalid(`${path}.type`, c.type, 'Approved and Denied conditions are mutually exclusive'));
      } else if (c.type === 'Denied') {
        denied = true;
        if (approved) errs.push(fieldErr.invalid(`${path}.type`, c.type, 'Approved and Denied conditions are mutually exclusive'));
      }
    }
    if (!opts.allowDuplicateConditionTypes) {
      if (seen.has(c.type)) errs.push(fieldErr.duplicate(`${path}.type`, c.type));
      seen.add(c.type);
    }
  });
  return errs;
}

function validateCSR(obj: StoredObject, opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  const spec = specOf(obj);
  try {
    parseCertificateRequest(bytesText(spec['request']));
  } catch (e) {
    errs.push(fieldErr.invalid('spec.request', goBytes(spec['request']), e instanceof Error ? e.message : String(e)));
  }
  const usages = usagesOf(obj);
  if (usages.length === 0) errs.push(fieldErr.required('spec.usages', 'usages must be provided'));
  if (!opts.allowUnknownUsages) {
    usages.forEach((u, i) => {
      if (!VALID_USAGES.includes(u)) errs.push(fieldErr.notSupported(`spec.usages[${i}]`, u, VALID_USAGES));
    });
  }
  if (!opts.allowDuplicateUsages) {
    const seen = new Set<string>();
    usages.forEach((u, i) => {
      if (seen.has(u)) errs.push(fieldErr.duplicate(`spec.usages[${i}]`, u));
      seen.add(u);
    });
  }
  const signer = signerOf(obj);
  if (!opts.allowLegacySignerName && signer === LEGACY_UNKNOWN_SIGNER) {
    errs.push(fieldErr.invalid('spec.signerName', signer, 'the legacy signerName is not allowed via this API version'));
  } else {
    errs.push(...validateSignerName('spec.signerName', signer));
  }
  const exp = spec['expirationSeconds'];
  if (typeof exp === 'number' && exp < 600) errs.push(fieldErr.invalid('spec.expirationSeconds', exp, 'may not specify a duration less than 600 seconds (10 minutes)'));
  errs.push(...validateConditions(obj, opts));
  if (!opts.allowArbitraryCertificate) {
    const problem = certificatePemProblem(bytesText(statusOf(obj)['certificate']));
    if (problem) errs.push(fieldErr.invalid('status.certificate', '<certificate data>', problem));
  }
  return errs;
}

/** kube's ValidateCertificateSigningRequestCreate (after the metadata). */
export function validateCertificateSigningRequestCreate(obj: StoredObject): FieldError[] {
  return validateCSR(obj, optionsFor(obj, undefined));
}

export type CsrUpdateKind = 'update' | 'status' | 'approval';

/** kube's validateCertificateSigningRequestUpdate with the options of the main resource, /status or /approval. */
export function validateCertificateSigningRequestUpdate(obj: StoredObject, old: StoredObject, kind: CsrUpdateKind): FieldError[] {
  const opts = optionsFor(obj, old);
  if (kind === 'status') opts.allowSettingCertificate = true;
  if (kind === 'approval') opts.allowSettingApprovalConditions = true;
  const errs = validateCSR(obj, opts);
  const of = (o: StoredObject, t: string): Array<Record<string, unknown>> => conditionsOf(o).filter((c) => c.type === t).map((c) => c.raw);
  for (const t of ['Approved', 'Denied', 'Failed']) {
    if (of(obj, t).length < of(old, t).length) errs.push(fieldErr.forbidden('status.conditions', `updates may not remove a condition of type ${JSON.stringify(t)}`));
  }
  if (!opts.allowSettingApprovalConditions) {
    for (const t of ['Approved', 'Denied']) {
      const before = of(old, t);
      const after = of(obj, t);
      if (after.length < before.length) continue;
      if (after.length > before.length) errs.push(fieldErr.forbidden('status.conditions', `updates may not add a condition of type ${JSON.stringify(t)}`));
      else if (!semanticEqual(before, after)) {
        errs.push(fieldErr.forbidden('status.conditions', `updates may not modify a condition of type ${JSON.stringify(t)}\n${describeChange(before, after)}`));
      }
    }
  }
  const cert = bytesText(statusOf(obj)['certificate']);
  const oldCert = bytesText(statusOf(old)['certificate']);
  if (cert !== oldCert) {
    if (!opts.allowSettingCertificate) errs.push(fieldErr.forbidden('status.certificate', 'updates may not set certificate content'));
    else if (oldCert.length > 0) errs.push(fieldErr.forbidden('status.certificate', 'updates may not modify existing certificate content'));
  }
  return errs;
}
