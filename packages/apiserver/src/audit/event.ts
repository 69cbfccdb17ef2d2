/**
 * The audit.k8s.io/v1 `Event` of one request, and its two encodings: a JSON line (kube's json
 * format, fields in kube's order, omitempty as in kube) and kube's one-line `legacy` text.
 */
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { setMember, type UserInfo } from '@plinth/api';
import type { Level, Stage } from './policy.js';

/** metav1.Status as the event carries it (kind and apiVersion never set). */
export interface ResponseStatus {
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code?: number;
}

export interface ObjectReference {
  resource: string;
  namespace: string;
  name: string;
  uid: string;
  apiGroup: string;
  apiVersion: string;
  resourceVersion: string;
  subresource: string;
}

/** One request's event, filled in as the request goes (kube's auditinternal.Event). */
export interface AuditEvent {
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  /** Undefined for a request that failed authentication (`"user":{}`). */
  user: UserInfo | undefined;
  impersonatedUser: UserInfo | undefined;
  sourceIPs: string[];
  userAgent: string;
  objectRef: ObjectReference | undefined;
  responseStatus: ResponseStatus | undefined;
  /** JSON text, encoded when logged (kube encodes at once too: later changes do not show). */
  requestObject: string | undefined;
  responseObject: string | undefined;
  /** Microseconds since the epoch. */
  requestReceivedTimestamp: number;
  stageTimestamp: number;
  annotations: Record<string, string> | undefined;
}

// Wall-clock microseconds from the monotonic clock: hrtime readings (RequestContext.start) convert
// without another clock read.
const HR_BASE = process.hrtime.bigint();
const EPOCH_US_BASE = Math.round((performance.timeOrigin + performance.now()) * 1000);

/** Microseconds since the epoch of a process.hrtime.bigint() reading. */
export function hrtimeToEpochMicros(t: bigint): number {
  return EPOCH_US_BASE + Number((t - HR_BASE) / 1000n);
}

export function nowMicros(): number {
  return hrtimeToEpochMicros(process.hrtime.bigint());
}

/** metav1.MicroTime: RFC 3339 in UTC with exactly six fractional digits. */
export function formatMicroTime(us: number): string {
  // Two timestamps per event, several events per millisecond: the date and time up to the
  // second is formatted once per second.
  const sec = Math.floor(us / 1_000_000);
  if (sec !== lastSecond) {
    lastSecond = sec;
    lastSecondText = new Date(sec * 1000).toISOString().slice(0, 19); // YYYY-MM-DDTHH:MM:SS
  }
  return `${lastSecondText}.${String(us - sec * 1_000_000).padStart(6, '0')}Z`;
}
let lastSecond = Number.NaN;
let lastSecondText = '';

/** Go's time.RFC3339Nano (trailing zeros of the fraction dropped), as the legacy format prints. */
function formatRFC3339Nano(us: number): string {
  const t = formatMicroTime(us);
  return t.replace(/\.?0+Z$/, 'Z');
}

const MAX_USER_AGENT = 1024;

/** The User-Agent, cut at 1024 characters as kube does. */
export function userAgentOf(req: IncomingMessage): string {
  const ua = req.headers['user-agent'] ?? '';
  return ua.length > MAX_USER_AGENT ? `${ua.slice(0, MAX_USER_AGENT)}...TRUNCATED` : ua;
}

/** An IP as Go's net.IP.String() prints it, or undefined when it is not one. */
function canonicalIP(s: string): string | undefined {
  const v = isIP(s);
  if (v === 4) return s;
  if (v !== 6) return undefined;
  const lower = s.toLowerCase();
  // An IPv4-mapped address prints as IPv4 in Go.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return mapped[1];
  return new URL(`http://[${lower}]`).hostname.slice(1, -1);
}

/**
 * kube's utilnet.SourceIPs: the X-Forwarded-For addresses, then X-Real-Ip unless already listed,
 * then the connection's remote address unless it is the last one listed.
 */
export function sourceIPs(req: IncomingMessage): string[] {
  const out: string[] = [];
  const fwd = req.headers['x-forwarded-for'];
  if (typeof fwd === 'string' && fwd) {
    for (const part of fwd.split(',')) {
      const ip = canonicalIP(part.trim());
      if (ip) out.push(ip);
    }
  }
  const real = req.headers['x-real-ip'];
  if (typeof real === 'string' && real) {
    const ip = canonicalIP(real.trim());
    if (ip && !out.includes(ip)) out.push(ip);
  }
  const remote = req.socket.remoteAddress;
  const ip = remote ? canonicalIP(remote) : undefined;
  if (ip && (out.length === 0 || out[out.length - 1] !== ip)) out.push(ip);
  return out;
}

/** The JSON of each authenticated user object (authenticators hand out one per identity). */
const userJSONs = new WeakMap<UserInfo, string>();

/** authentication/v1 UserInfo in JSON (every field omitempty). */
function userJSON(u: UserInfo | undefined): string {
  if (!u) return '{}';
  let j = userJSONs.get(u);
  if (j === undefined) userJSONs.set(u, (j = encodeUser(u)));
  return j;
}

function encodeUser(u: UserInfo): string {
  let s = '{';
  let sep = '';
  if (u.name) {
    s += `"username":${JSON.stringify(u.name)}`;
    sep = ',';
  }
  if (u.uid) {
    s += `${sep}"uid":${JSON.stringify(u.uid)}`;
    sep = ',';
  }
  if (u.groups && u.groups.length > 0) {
    s += `${sep}"groups":${JSON.stringify(u.groups)}`;
    sep = ',';
  }
  if (u.extra && Object.keys(u.extra).length > 0) s += `${sep}"extra":${JSON.stringify(u.extra)}`;
  return `${s}}`;
}

function objectRefJSON(r: ObjectReference): string {
  const parts: string[] = [];
  for (const k of ['resource', 'namespace', 'name', 'uid', 'apiGroup', 'apiVersion', 'resourceVersion', 'subresource'] as const) {
    if (r[k]) parts.push(`"${k}":${JSON.stringify(r[k])}`);
  }
  return `{${parts.join(',')}}`;
}

function statusJSON(st: ResponseStatus): string {
  let s = '{"metadata":{}';
  if (st.status) s += `,"status":${JSON.stringify(st.status)}`;
  if (st.message) s += `,"message":${JSON.stringify(st.message)}`;
  if (st.reason) s += `,"reason":${JSON.stringify(st.reason)}`;
  if (st.details !== undefined && st.details !== null) s += `,"details":${JSON.stringify(st.details)}`;
  if (st.code) s += `,"code":${st.code}`;
  return `${s}}`;
}

/** The event as one JSON line (with its newline), as kube's log backend writes it. */
export function encodeEventJSON(ev: AuditEvent): string {
  let s = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"${ev.level}","auditID":${JSON.stringify(ev.auditID)},"stage":"${ev.stage}","requestURI":${JSON.stringify(ev.requestURI)},"verb":${JSON.stringify(ev.verb)},"user":${userJSON(ev.user)}`;
  if (ev.impersonatedUser) s += `,"impersonatedUser":${userJSON(ev.impersonatedUser)}`;
  if (ev.sourceIPs.length > 0) s += `,"sourceIPs":${JSON.stringify(ev.sourceIPs)}`;
  if (ev.userAgent) s += `,"userAgent":${JSON.stringify(ev.userAgent)}`;
  if (ev.objectRef) s += `,"objectRef":${objectRefJSON(ev.objectRef)}`;
  if (ev.responseStatus) s += `,"responseStatus":${statusJSON(ev.responseStatus)}`;
  if (ev.requestObject !== undefined) s += `,"requestObject":${ev.requestObject}`;
  if (ev.responseObject !== undefined) s += `,"responseObject":${ev.responseObject}`;
  s += `,"requestReceivedTimestamp":"${formatMicroTime(ev.requestReceivedTimestamp)}","stageTimestamp":"${formatMicroTime(ev.stageTimestamp)}"`;
  if (ev.annotations && Object.keys(ev.annotations).length > 0) s += `,"annotations":${JSON.stringify(sortedKeys(ev.annotations))}`;
  return `${s}}\n`;
}

/** Go encodes a map with its keys sorted. */
function sortedKeys(m: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(m).sort()) setMember(out, k, m[k]!);
  return out;
}

/** Go's %q for the legacy format (JSON string escaping is close enough for printable text). */
const q = (s: string): string => JSON.stringify(s);
const quotedList = (l: string[]): string => l.map(q).join(',');

/** kube's audit.EventString: the `legacy` format's one line. */
export function encodeEventLegacy(ev: AuditEvent): string {
  let username = '<none>';
  let groups = '<none>';
  if (ev.user?.name) {
    username = ev.user.name;
    if (ev.user.groups.length > 0) groups = quotedList(ev.user.groups);
  }
  let asUser = '<self>';
  let asGroups = '<lookup>';
  if (ev.impersonatedUser) {
    asUser = ev.impersonatedUser.name;
    asGroups = quotedList(ev.impersonatedUser.groups);
  }
  const namespace = ev.objectRef?.namespace || '<none>';
  const response = ev.responseStatus ? String(ev.responseStatus.code ?? 0) : '<deferred>';
  const ip = ev.sourceIPs[0] ?? '<unknown>';
  return (
    `${formatRFC3339Nano(ev.requestReceivedTimestamp)} AUDIT: id=${q(ev.auditID)} stage=${q(ev.stage)} ip=${q(ip)} method=${q(ev.verb)} user=${q(username)} groups=${q(groups)} ` +
    `as=${q(asUser)} asgroups=${q(asGroups)} user-agent=${q(ev.userAgent)} namespace=${q(namespace)} uri=${q(ev.requestURI)} response="${response}"\n`
  );
}
