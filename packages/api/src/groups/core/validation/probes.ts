/**
 * Probes and lifecycle handlers as kube 1.24 validates them (validateProbe, validateHandler,
 * validateLifecycle, the exec/httpGet/tcpSocket/grpc actions, ValidatePortNumOrName).
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { type JsonObject, asObject, isSet, list, num, objects, str } from './access.js';
import { isHTTPHeaderName, isValidPortName, isValidPortNum, validateNonnegativeField } from './basic.js';

/** kube's `ValidatePortNumOrName` over an IntOrString as decoded JSON (absent reads as the int 0). */
export function validatePortNumOrName(port: unknown, field: string): FieldError[] {
  if (typeof port === 'string') return isValidPortName(port).map((m) => fieldErr.invalid(field, port, m));
  const n = num(port);
  return isValidPortNum(n).map((m) => fieldErr.invalid(field, n, m));
}

const HTTP_SCHEMES = ['HTTP', 'HTTPS'];
const HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;

function validateAction(kind: (typeof HANDLERS)[number], action: JsonObject, field: string): FieldError[] {
  switch (kind) {
    case 'exec':
      return list(action['command']).length === 0 ? [fieldErr.required(`${field}.command`)] : [];
    case 'httpGet': {
      const errs: FieldError[] = [];
      if (str(action['path']).length === 0) errs.push(fieldErr.required(`${field}.path`));
      errs.push(...validatePortNumOrName(action['port'], `${field}.port`));
      const scheme = str(action['scheme']);
      if (!HTTP_SCHEMES.includes(scheme)) errs.push(fieldErr.notSupported(`${field}.scheme`, scheme, HTTP_SCHEMES));
      for (const h of objects(action['httpHeaders'])) {
        const name = str(h['name']);
        errs.push(...isHTTPHeaderName(name).map((m) => fieldErr.invalid(`${field}.httpHeaders`, name, m)));
      }
      return errs;
    }
    case 'tcpSocket':
      return validatePortNumOrName(action['port'], `${field}.port`);
    case 'grpc':
      return validatePortNumOrName(num(action['port']), `${field}.port`);
  }
}

/**
 * kube's `validateHandler`: exactly one handler. `allowGRPC` is false for lifecycle handlers,
 * which have no grpc member in kube's types (decoding drops it).
 */
export function validateHandler(handler: JsonObject, field: string, allowGRPC: boolean): FieldError[] {
  const errs: FieldError[] = [];
  let n = 0;
  for (const kind of HANDLERS) {
    if (kind === 'grpc' && !allowGRPC) continue;
    const action = asObject(handler[kind]);
    if (!action) continue;
    if (n > 0) errs.push(fieldErr.forbidden(`${field}.${kind}`, 'may not specify more than 1 handler type'));
    else {
      n++;
      errs.push(...validateAction(kind, action, `${field}.${kind}`));
    }
  }
  if (n === 0) errs.push(fieldErr.required(field, 'must specify a handler type'));
  return errs;
}

/** kube's `validateProbe`. */
export function validateProbe(probe: unknown, field: string): FieldError[] {
  const p = asObject(probe);
  if (!p) return [];
  const errs = validateHandler(p, field, true);
  for (const k of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']) {
    errs.push(...validateNonnegativeField(p[k] ?? 0, `${field}.${k}`));
  }
  if (isSet(p['terminationGracePeriodSeconds']) && num(p['terminationGracePeriodSeconds']) <= 0) {
    errs.push(fieldErr.invalid(`${field}.terminationGracePeriodSeconds`, p['terminationGracePeriodSeconds'], 'must be greater than 0'));
  }
  return errs;
}

/** kube's `validateLifecycle`. */
export function validateLifecycle(lifecycle: JsonObject, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const hook of ['postStart', 'preStop'] as const) {
    const h = asObject(lifecycle[hook]);
    if (h) errs.push(...validateHandler(h, `${field}.${hook}`, false));
  }
  return errs;
}
