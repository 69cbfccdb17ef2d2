/**
 * The address a replica advertises (the `kubernetes` Endpoints list it), chosen as
 * kube-apiserver 1.24 chooses it (genericoptions `DefaultAdvertiseAddress` →
 * `SecureServingOptions.DefaultExternalAddress` → apimachinery `ResolveBindAddress`):
 * `--advertise-address` when set and not 0.0.0.0/::; else `--bind-address` unless it is
 * unspecified or loopback; else the first global unicast address of the interface of a default
 * route (from /proc/net/route and /proc/net/ipv6_route; IPv4 first, IPv6 first for an IPv6 bind
 * address); without /proc/net/route, the first such address of any interface.
 */
import { existsSync, readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { formatIP, isIPv4Bytes, parseIP } from '@plinth/api';

type Family = 'IPv4' | 'IPv6';

/** The system's view, replaceable in tests. */
export interface HostNetwork {
  /** Interface name → its addresses (os.networkInterfaces()). */
  interfaces(): Record<string, { address: string; family: string | number }[] | undefined>;
  /** The contents of /proc/net/route and /proc/net/ipv6_route, or undefined when absent. */
  routeFile(name: 'route' | 'ipv6_route'): string | undefined;
}

const systemNetwork: HostNetwork = {
  interfaces: () => networkInterfaces(),
  routeFile: (name) => {
    const path = `/proc/net/${name}`;
    if (!existsSync(path)) return undefined;
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  },
};

/** Go's IP.IsGlobalUnicast: not unspecified, loopback, link-local, multicast or broadcast. */
function isGlobalUnicast(ip: Uint8Array): boolean {
  if (isIPv4Bytes(ip)) {
    const [a, b] = [ip[12]!, ip[13]!];
    const all = ip.subarray(12);
    if (all.every((x) => x === 0) || all.every((x) => x === 255)) return false;
    return a !== 127 && !(a === 169 && b === 254) && a < 224;
  }
  if (ip.every((x) => x === 0)) return false;
  if (ip.subarray(0, 15).every((x) => x === 0) && ip[15] === 1) return false;
  if (ip[0] === 0xff) return false;
  return !(ip[0] === 0xfe && (ip[1]! & 0xc0) === 0x80);
}

function interfaceAddress(net: HostNetwork, iface: string | undefined, family: Family): string | undefined {
  const ifaces = net.interfaces();
  const names = iface === undefined ? Object.keys(ifaces) : [iface];
  for (const name of names) {
    for (const a of ifaces[name] ?? []) {
      const ip = parseIP(a.address);
      if (!ip || isIPv4Bytes(ip) !== (family === 'IPv4') || !isGlobalUnicast(ip)) continue;
      return formatIP(ip);
    }
  }
  return undefined;
}

/** Default routes: interface names per family, in the files' order. */
function defaultRoutes(net: HostNetwork): { iface: string; family: Family }[] {
  const routes: { iface: string; family: Family }[] = [];
  for (const line of (net.routeFile('route') ?? '').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length >= 2 && f[1] === '00000000') routes.push({ iface: f[0]!, family: 'IPv4' });
  }
  for (const line of (net.routeFile('ipv6_route') ?? '').split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length >= 10 && /^0{32}$/.test(f[0]!) && f[1] === '00' && f[9] !== 'lo') routes.push({ iface: f[9]!, family: 'IPv6' });
  }
  return routes;
}

function chooseHostInterface(net: HostNetwork, families: Family[]): string {
  if (net.routeFile('route') === undefined) {
    for (const family of families) {
      const ip = interfaceAddress(net, undefined, family);
      if (ip) return ip;
    }
    throw new Error('no acceptable interface with global unicast address found on host');
  }
  const routes = defaultRoutes(net);
  if (routes.length === 0) throw new Error('no default routes found in "/proc/net/route" or "/proc/net/ipv6_route"');
  for (const family of families) {
    for (const r of routes) {
      if (r.family !== family) continue;
      const ip = interfaceAddress(net, r.iface, family);
      if (ip) return ip;
    }
  }
  throw new Error('unable to select an IP from default routes.');
}

/**
 * The advertised address for `--advertise-address` and `--bind-address` (both as given), or an
 * Error with kube's message when none can be found.
 */
export function resolveAdvertiseAddress(advertiseAddress: string, bindAddress: string, net: HostNetwork = systemNetwork): string {
  const adv = advertiseAddress ? parseIP(advertiseAddress) : undefined;
  if (adv && !isUnspecified(adv)) return formatIP(adv);
  const bind = bindAddress ? parseIP(bindAddress) : undefined;
  if (bind && !isUnspecified(bind) && !isLoopback(bind)) return formatIP(bind);
  const families: Family[] = bind && !isIPv4Bytes(bind) ? ['IPv6', 'IPv4'] : ['IPv4', 'IPv6'];
  try {
    return chooseHostInterface(net, families);
  } catch (e) {
    throw new Error(`Unable to find suitable network address.error='${(e as Error).message}'. Try to set the AdvertiseAddress directly or provide a valid BindAddress to fix this.`);
  }
}

function isUnspecified(ip: Uint8Array): boolean {
  return isIPv4Bytes(ip) ? ip.subarray(12).every((x) => x === 0) : ip.every((x) => x === 0);
}

function isLoopback(ip: Uint8Array): boolean {
  return isIPv4Bytes(ip) ? ip[12] === 127 : ip.subarray(0, 15).every((x) => x === 0) && ip[15] === 1;
}
