/**
 * `--service-cluster-ip-range` and `--service-node-port-range` as kube-apiserver 1.24 reads and
 * validates them (cmd/kube-apiserver/app/options: getServiceIPAndRanges, validateClusterIPFlags,
 * validateMaxCIDRRange; pkg/controlplane ServiceIPRange), with kube's messages.
 */
import { type IPNet, formatCIDR, formatIP, indexedIP, parseCIDR, cidrRangeSize } from '@plinth/api';
import { type PortRange, formatPortRange, parsePortRange } from './port-allocator.js';

/** kube-apiserver's default service CIDR when the flag is unset (deprecated there, but still used). */
export const DEFAULT_SERVICE_CIDR = '10.0.0.0/24';
/** kube-apiserver's default `--service-node-port-range`. */
export const DEFAULT_NODE_PORT_RANGE = '30000-32767';
/** The largest service CIDR kube accepts: 20 host bits (the bitmap is kept in etcd). */
const MAX_CIDR_BITS = 20;

export interface ServiceIPRanges {
  primary: IPNet;
  secondary?: IPNet;
  /** The first address of the primary range: the `kubernetes` Service's cluster IP. */
  apiServerServiceIP: string;
}

/**
 * Parses `--service-cluster-ip-range` (one CIDR, or two of different families separated by a
 * comma; '' is kube's default 10.0.0.0/24). Throws an Error with kube's message.
 */
export function parseServiceClusterIPRange(text: string): ServiceIPRanges {
  const list = text === '' ? [] : text.split(',');
  const cidrText = list.length === 0 ? DEFAULT_SERVICE_CIDR : list[0]!;
  const primary = parseCIDR(cidrText);
  if (primary instanceof Error) throw new Error('service-cluster-ip-range[0] is not a valid cidr');
  // kube's ServiceIPRange: at least 8 addresses, and the first one is the API server's.
  const size = cidrRangeSize(primary) < 65536n ? cidrRangeSize(primary) : 65536n;
  if (size < 8n) throw new Error('error determining service IP ranges for primary service cidr: the service cluster IP range must be at least 8 IP addresses');
  const first = indexedIP(primary, 1);
  if (!first) throw new Error(`error determining service IP ranges for primary service cidr: can't generate IP with index 1 from subnet. subnet too small. subnet: "${formatCIDR(primary)}"`);
  const out: ServiceIPRanges = { primary, apiServerServiceIP: formatIP(first) };
  if (list.length > 1) {
    const secondary = parseCIDR(list[1]!);
    if (secondary instanceof Error) throw new Error('service-cluster-ip-range[1] is not an ip net');
    out.secondary = secondary;
  }
  return out;
}

function maxCIDRRangeError(cidr: IPNet, flag: string): string | undefined {
  if (cidr.bits - cidr.prefix > MAX_CIDR_BITS) return `specified ${flag} is too large; for ${cidr.bits}-bit addresses, the mask must be >= ${cidr.bits - MAX_CIDR_BITS}`;
  return undefined;
}

/** kube's validateClusterIPFlags over the parsed ranges: the problems, as kube words them. */
export function validateServiceClusterIPRange(text: string, ranges: ServiceIPRanges): string[] {
  const errs: string[] = [];
  if (text.split(',').length > 2) errs.push('--service-cluster-ip-range must not contain more than two entries');
  const primaryErr = maxCIDRRangeError(ranges.primary, '--service-cluster-ip-range');
  if (primaryErr) errs.push(primaryErr);
  if (ranges.secondary) {
    if (ranges.secondary.family === ranges.primary.family) errs.push('--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family');
    const secondaryErr = maxCIDRRangeError(ranges.secondary, '--service-cluster-ip-range[1]');
    if (secondaryErr) errs.push(secondaryErr);
  }
  return errs;
}

/** Parses `--service-node-port-range` (kube's PortRange syntax); throws kube's message. */
export function parseServiceNodePortRange(text: string): PortRange {
  return parsePortRange(text);
}

export { formatPortRange };
