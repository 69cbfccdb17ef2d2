/** Assertions shared by the HTTP test suites: status codes and kube Status bodies. */
import assert from 'node:assert/strict';
import type { Response } from './harness.js';

export function expectCode(res: Response, code: number, what = ''): void {
  assert.equal(res.status, code, `${what} expected ${code}, got ${res.status}: ${res.raw.toString().slice(0, 800)}`);
}

/** A kube `Status` failure with this code and reason (and message, exactly or by pattern). */
export function expectStatus(res: Response, code: number, reason: string, message?: string | RegExp): void {
  expectCode(res, code);
  assert.equal(res.body?.kind, 'Status', res.raw.toString().slice(0, 300));
  assert.equal(res.body.apiVersion, 'v1');
  assert.equal(res.body.status, 'Failure');
  assert.equal(res.body.code, code);
  // kube's StatusReasonUnknown ("") is omitted from the body (omitempty).
  if (reason === '') assert.equal(Object.hasOwn(res.body, 'reason'), false, 'an unknown reason is omitted');
  else assert.equal(res.body.reason, reason);
  assert.equal(typeof res.body.message, 'string');
  if (typeof message === 'string') assert.equal(res.body.message, message);
  else if (message) assert.match(res.body.message, message);
}

/** The `field` of each cause in a Status's details. */
export function causeFields(res: Response): string[] {
  return ((res.body?.details?.causes ?? []) as Array<{ field?: string }>).map((x) => x.field ?? '');
}
