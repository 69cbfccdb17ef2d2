/**
 * IP addresses and CIDRs as kube reads and prints them: k8s.io/utils/net's `ParseIPSloppy` and
 * `ParseCIDRSloppy` (Go 1.16's `net.ParseIP`/`ParseCIDR`: IPv4 octets may carry leading zeros,
 * read as decimal) and Go's `IP.String()` (dotted IPv4, RFC 5952 IPv6, an IPv4-mapped IPv6
 * address prints as IPv4). Validation, the cluster-IP allocator and the flags share these, so an
 * address is the same address everywhere.
 */

/** An IP as Go holds it: 16 bytes (IPv4 as the IPv4-mapped form ::ffff:a.b.c.d). */
export type IPBytes = Uint8Array;

const IPV4_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
/** Go's `big` bound in dtoi/xtoi. */
const BIG = 0xffffff;

function dtoi(s: string, from: number): [n: number, end: number, ok: boolean] {
  let n = 0;
  let i = from;
  for (; i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57; i++) {
    n = n * 10 + (s.charCodeAt(i) - 48);
    if (n >= BIG) return [BIG, i, false];
  }
  return i === from ? [0, from, false] : [n, i, true];
}

function xtoi(s: string, from: number): [n: number, end: number, ok: boolean] {
  let n = 0;
  let i = from;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) n = n * 16 + (c - 48);
    else if (c >= 97 && c <= 102) n = n * 16 + (c - 87);
    else if (c >= 65 && c <= 70) n = n * 16 + (c - 55);
    else break;
    if (n >= BIG) return [0, i, false];
  }
  return i === from ? [0, from, false] : [n, i, true];
}

function v4(a: number, b: number, c: number, d: number): IPBytes {
  return Uint8Array.from([...IPV4_PREFIX, a, b, c, d]);
}

function parseIPv4(s: string): IPBytes | undefined {
  const p = [0, 0, 0, 0];
  let pos = 0;
  for (let i = 0; i < 4; i++) {
    if (pos >= s.length) return undefined;
    if (i > 0) {
      if (s[pos] !== '.') return undefined;
      pos++;
    }
    const [n, end, ok] = dtoi(s, pos);
    if (!ok || n > 0xff) return undefined;
    pos = end;
    p[i] = n;
  }
  return pos === s.length ? v4(p[0]!, p[1]!, p[2]!, p[3]!) : undefined;
}

function parseIPv6(text: string): IPBytes | undefined {
  const ip = new Uint8Array(16);
  let s = text;
  let ellipsis = -1;
  if (s.length >= 2 && s[0] === ':' && s[1] === ':') {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return ip;
  }
  let i = 0;
  while (i < 16) {
    const [n, c, ok] = xtoi(s, 0);
    if (!ok || n > 0xffff) return undefined;
    if (c < s.length && s[c] === '.') {
      // A trailing IPv4 address, in the last 4 bytes (or before an earlier "::").
      if (ellipsis < 0 && i !== 12) return undefined;
      if (i + 4 > 16) return undefined;
      const ip4 = parseIPv4(s);
      if (!ip4) return undefined;
      ip.set(ip4.subarray(12), i);
      s = '';
      i += 4;
      break;
    }
    ip[i] = n >> 8;
    ip[i + 1] = n & 0xff;
    i += 2;
    s = s.slice(c);
    if (s.length === 0) break;
    if (s[0] !== ':' || s.length === 1) return undefined;
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) return undefined;
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) return undefined;
  if (i < 16) {
    if (ellipsis < 0) return undefined;
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j]!;
    for (let j = ellipsis + n - 1; j >= ellipsis; j--) ip[j] = 0;
  } else if (ellipsis >= 0) {
    return undefined;
  }
  return ip;
}

/** k8s.io/utils/net `ParseIPSloppy`: the 16-byte address, or undefined when `s` is no IP. */
export function parseIP(s: string): IPBytes | undefined {
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '.') return parseIPv4(s);
    if (s[i] === ':') return parseIPv6(s);
  }
  return undefined;
}

/** Whether the 16-byte address is IPv4 (Go's `To4() != nil`: IPv4 or IPv4-mapped). */
export function isIPv4Bytes(ip: IPBytes): boolean {
  for (let i = 0; i < 12; i++) if (ip[i] !== IPV4_PREFIX[i]) return false;
  return true;
}

/** Go's `IP.String()`. */
export function formatIP(ip: IPBytes): string {
  if (isIPv4Bytes(ip)) return `${ip[12]}.${ip[13]}.${ip[14]}.${ip[15]}`;
  let e0 = -1;
  let e1 = -1;
  for (let i = 0; i < 16; i += 2) {
    let j = i;
    while (j < 16 && ip[j] === 0 && ip[j + 1] === 0) j += 2;
    if (j > i && j - i > e1 - e0) {
      e0 = i;
      e1 = j;
      i = j;
    }
  }
  if (e1 - e0 <= 2) {
    e0 = -1;
    e1 = -1;
  }
  let out = '';
  for (let i = 0; i < 16; i += 2) {
    if (i === e0) {
      out += '::';
      i = e1;
      if (i >= 16) break;
    } else if (i > 0) {
      out += ':';
    }
    out += ((ip[i]! << 8) | ip[i + 1]!).toString(16);
  }
  return out;
}

/** 'IPv4', 'IPv6', or undefined when `s` is no IP (k8s.io/utils/net IsIPv4String/IsIPv6String). */
export function ipFamilyOf(s: string): 'IPv4' | 'IPv6' | undefined {
  const ip = parseIP(s);
  if (!ip) return undefined;
  return isIPv4Bytes(ip) ? 'IPv4' : 'IPv6';
}

export function isIPv6String(s: string): boolean {
  return ipFamilyOf(s) === 'IPv6';
}

/** The address as an integer: 32 bits for IPv4 (Go's `To4()`), 128 for IPv6 (netutils.BigForIP). */
export function ipToBigInt(ip: IPBytes): bigint {
  const from = isIPv4Bytes(ip) ? 12 : 0;
  let n = 0n;
  for (let i = from; i < 16; i++) n = (n << 8n) | BigInt(ip[i]!);
  return n;
}

/** The address of an integer in the given family. */
export function bigIntToIP(n: bigint, family: 'IPv4' | 'IPv6'): IPBytes {
  const out = family === 'IPv4' ? v4(0, 0, 0, 0) : new Uint8Array(16);
  let v = n;
  for (let i = 15; i >= (family === 'IPv4' ? 12 : 0); i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** A parsed CIDR: the network address (host bits cleared), its prefix length and address size. */
export interface IPNet {
  /** The network address, 16 bytes. */
  ip: IPBytes;
  family: 'IPv4' | 'IPv6';
  /** Prefix length (ones of the mask). */
  prefix: number;
  /** 32 or 128. */
  bits: number;
}

/**
 * k8s.io/utils/net `ParseCIDRSloppy`: the network (host bits cleared), or an Error with Go's
 * message (`invalid CIDR address: <s>`).
 */
export function parseCIDR(s: string): IPNet | Error {
  const slash = s.indexOf('/');
  const bad = (): Error => new Error(`invalid CIDR address: ${s}`);
  if (slash < 0) return bad();
  const addr = s.slice(0, slash);
  const mask = s.slice(slash + 1);
  let bits = 32;
  let ip = parseIPv4(addr);
  if (!ip) {
    bits = 128;
    ip = parseIPv6(addr);
  }
  const [n, end, ok] = dtoi(mask, 0);
  if (!ip || !ok || end !== mask.length || n < 0 || n > bits) return bad();
  const family = bits === 32 ? 'IPv4' : 'IPv6';
  const hostBits = BigInt(bits - n);
  const value = (ipToBigIntIn(ip, bits) >> hostBits) << hostBits;
  return { ip: bigIntToIP(value, family), family, prefix: n, bits };
}

function ipToBigIntIn(ip: IPBytes, bits: number): bigint {
  let n = 0n;
  for (let i = bits === 32 ? 12 : 0; i < 16; i++) n = (n << 8n) | BigInt(ip[i]!);
  return n;
}

/** Go's `IPNet.String()` for a canonical mask: `10.0.0.0/24`, `fd00::/108`. */
export function formatCIDR(net: IPNet): string {
  return `${formatIP(net.ip)}/${net.prefix}`;
}

/** Go's `IPNet.Contains`: an IPv4 address is in an IPv4 network only, IPv6 in IPv6. */
export function cidrContains(net: IPNet, ip: IPBytes): boolean {
  const fam = isIPv4Bytes(ip) ? 'IPv4' : 'IPv6';
  if (fam !== net.family) return false;
  const hostBits = BigInt(net.bits - net.prefix);
  return ipToBigInt(ip) >> hostBits === ipToBigInt(net.ip) >> hostBits;
}

/** k8s.io/utils/net `RangeSize`: the number of addresses (2^host bits; MaxInt64 past 2^62). */
export function cidrRangeSize(net: IPNet): bigint {
  const host = net.bits - net.prefix;
  return host >= 63 ? 2n ** 63n - 1n : 1n << BigInt(host);
}

/** k8s.io/utils/net `GetIndexedIP`: the network address plus `index`, if still inside it. */
export function indexedIP(net: IPNet, index: number): IPBytes | undefined {
  const ip = bigIntToIP(ipToBigInt(net.ip) + BigInt(index), net.family);
  return cidrContains(net, ip) ? ip : undefined;
}

/** kube's `validation.IsValidIP` message. */
export const INVALID_IP_MSG = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';

/** kube's `IsValidIP`. */
export function isValidIP(value: string): string[] {
  return parseIP(value) ? [] : [INVALID_IP_MSG];
}

/**
 * The special ranges kube's `ValidateNonSpecialIP` refuses for Endpoints and external IPs, as
 * messages (Go's IsUnspecified, IsLoopback, IsLinkLocalUnicast, IsLinkLocalMulticast).
 */
export function specialIPMessages(value: string): string[] {
  const ip = parseIP(value);
  if (!ip) return ['must be a valid IP address'];
  const msgs: string[] = [];
  const is4 = isIPv4Bytes(ip);
  const a = ip[12]!;
  const b = ip[13]!;
  const c = ip[14]!;
  const unspecified = is4 ? a === 0 && b === 0 && c === 0 && ip[15] === 0 : ip.every((x) => x === 0);
  if (unspecified) msgs.push(`may not be unspecified (${value})`);
  const loopback = is4 ? a === 127 : ip.subarray(0, 15).every((x) => x === 0) && ip[15] === 1;
  if (loopback) msgs.push('may not be in the loopback range (127.0.0.0/8, ::1/128)');
  const linkLocalUnicast = is4 ? a === 169 && b === 254 : ip[0] === 0xfe && (ip[1]! & 0xc0) === 0x80;
  if (linkLocalUnicast) msgs.push('may not be in the link-local range (169.254.0.0/16, fe80::/10)');
  const linkLocalMulticast = is4 ? a === 224 && b === 0 && c === 0 : ip[0] === 0xff && (ip[1]! & 0x0f) === 0x02;
  if (linkLocalMulticast) msgs.push('may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)');
  return msgs;
}

/** k8s.io/utils/net `IsDualStackIPStrings`: one of each family among valid IPs (undefined: an invalid IP). */
export function isDualStackIPStrings(ips: string[]): boolean | undefined {
  let v4Found = false;
  let v6Found = false;
  for (const s of ips) {
    const ip = parseIP(s);
    if (!ip) return undefined;
    if (isIPv4Bytes(ip)) v4Found = true;
    else v6Found = true;
  }
  return v4Found && v6Found;
}
