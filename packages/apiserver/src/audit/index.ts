/**
 * Auditing (kube's --audit-* flags): a policy decides each request's level, the log backend writes
 * the events. No policy file, or no log path: no events (as kube), only the Audit-Id header.
 */
import type { ServerOptions } from '../flags.js';
import type { Logger } from '../log.js';
import { createLogBackend, ensureLogFile, LOG_FORMATS, type LogFormat } from './backend.js';
import { loadPolicyFile } from './policy.js';
import type { AuditDeps } from './filter.js';

export { withAudit, withAuditID, withFailedAuthenticationAudit, auditRequestObject, auditRequestPatch, auditResponseObject, auditLevelOf, isAudited, type AuditDeps } from './filter.js';
export { createLogBackend, type AuditBackend, type LogBackendOptions } from './backend.js';
export { loadPolicyFile, parsePolicy, compilePolicy, type AuditPolicy } from './policy.js';

/** What the audit filters need: the policy, the backend, the level hook. */
export type Audit = AuditDeps;

/** Metric hooks (the metrics are defined elsewhere). */
export interface AuditHooks {
  /** apiserver_audit_event_total: one per event handed to the backend. */
  onEvent?: () => void;
  /** apiserver_audit_error_total{plugin="log"}: events that could not be written. */
  onError?: (events: number) => void;
  /** apiserver_audit_level_total{level}: each policy evaluation's level. */
  onLevel?: (level: string) => void;
}

/** kube's AuditLogOptions.Validate: the log flags' problems, when a log path is set. */
export function validateAuditFlags(f: ServerOptions): string[] {
  const errs: string[] = [];
  if (f.auditLogPath !== '' && !(LOG_FORMATS as readonly string[]).includes(f.auditLogFormat)) {
    errs.push(`invalid audit log format ${f.auditLogFormat}, allowed formats are ${JSON.stringify(LOG_FORMATS.join(','))}`);
  }
  if (f.auditLogMaxage < 0) errs.push(`--audit-log-maxage ${f.auditLogMaxage} can't be a negative number`);
  if (f.auditLogMaxbackup < 0) errs.push(`--audit-log-maxbackup ${f.auditLogMaxbackup} can't be a negative number`);
  if (f.auditLogMaxsize < 0) errs.push(`--audit-log-maxsize ${f.auditLogMaxsize} can't be a negative number`);
  return errs;
}

/**
 * The policy (loaded and validated: a bad file fails start-up) and the log backend, or undefined
 * when either flag is unset.
 */
export function createAudit(f: ServerOptions, log: Logger, hooks: AuditHooks = {}): Audit | undefined {
  const policy = f.auditPolicyFile ? loadPolicyFile(f.auditPolicyFile) : undefined;
  if (!policy) {
    // kube opens the log file even then (a path that cannot be one fails start-up), but writes nothing.
    if (f.auditLogPath && f.auditLogPath !== '-') ensureLogFile(f.auditLogPath);
    if (f.auditLogPath) log.v(2, 'no audit policy file provided, no events will be recorded for the log backend');
    return undefined;
  }
  if (!f.auditLogPath) return undefined;
  const backend = createLogBackend({
    path: f.auditLogPath,
    format: f.auditLogFormat as LogFormat,
    maxSizeMB: f.auditLogMaxsize,
    maxBackups: f.auditLogMaxbackup,
    maxAgeDays: f.auditLogMaxage,
    log,
    ...(hooks.onEvent ? { onEvent: hooks.onEvent } : {}),
    ...(hooks.onError ? { onError: hooks.onError } : {}),
  });
  return { policy, backend, ...(hooks.onLevel ? { onLevel: hooks.onLevel } : {}) };
}
