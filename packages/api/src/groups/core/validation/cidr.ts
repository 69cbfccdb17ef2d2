/**
 * CIDRs as k8s.io/utils/net reads them (`ParseCIDRSloppy`, `IsDualStackCIDRStrings`): Go's
 * net.ParseCIDR, except that IPv4 octets may carry leading zeros.
 */
import { isIPv6 } from 'node:net';

const IPV4_SLOPPY = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** The IP family of a CIDR kube accepts (4 or 6), or undefined when it does not parse. */
export function cidrFamily(cidr: string): 4 | 6 | undefined {
  const slash = cidr.indexOf('/');
  if (slash < 0) return undefined;
  const ip = cidr.slice(0, slash);
  const bits = cidr.slice(slash + 1);
  if (!/^\d+$/.test(bits)) return undefined;
  const m = IPV4_SLOPPY.exec(ip);
  if (m) return m.slice(1).every((o) => Number(o) <= 255) && Number(bits) <= 32 ? 4 : undefined;
  if (ip.includes('%') || !isIPv6(ip)) return undefined;
  // An IPv4-mapped address is IPv4 to Go (To4() != nil), with a 128-bit prefix length.
  const mapped = /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip);
  return Number(bits) <= 128 ? (mapped ? 4 : 6) : undefined;
}

/** The error k8s.io/utils/net's `ParseCIDRs` reports for the first CIDR that does not parse. */
export function parseCIDRsError(cidrs: string[]): string | undefined {
  const bad = cidrs.find((c) => cidrFamily(c) === undefined);
  return bad === undefined ? undefined : `failed to parse cidr value:${JSON.stringify(bad)} with error:invalid CIDR address: ${bad}`;
}

/** k8s.io/utils/net's `IsDualStackCIDRs`: at least one IPv4 and one IPv6 CIDR. */
export function isDualStackCIDRs(cidrs: string[]): boolean {
  const families = new Set(cidrs.map(cidrFamily));
  return families.has(4) && families.has(6);
}
