/**
 * What every proxy sub-resource (pods, services and nodes `proxy`, the kubelet connecters) needs to
 * read its target: kube's `name[:port]` ids and the addresses a proxy may dial.
 */
import { isIP } from 'node:net';

/** kube's utilnet.SplitSchemeNamePort: `name`, `name:port` or `scheme:name:port` (scheme http or https). */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(':');
  let scheme = '';
  let name = '';
  let port = '';
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) [name, port] = parts as [string, string];
  else if (parts.length === 3) [scheme, name, port] = parts as [string, string, string];
  else return undefined;
  if (name === '' || !['', 'http', 'https'].includes(scheme)) return undefined;
  return { scheme, name, port };
}

/**
 * Go's net.IP.IsGlobalUnicast: no unspecified, loopback, multicast, link-local or broadcast
 * address. Stricter than kube's IsProxyableIP (which lets unspecified and global multicast
 * through): a proxy of the API server never dials those either.
 */
export function isGlobalUnicast(ip: string): boolean {
  let v4 = isIP(ip) === 4 ? ip : '';
  if (!v4) {
    if (isIP(ip) !== 6) return false;
    // The URL parser writes IPv6 compressed: `::1`, `::ffff:102:304` for a mapped IPv4.
    const v6 = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
    const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6);
    if (!mapped) {
      if (v6 === '::' || v6 === '::1') return false;
      const first = parseInt(v6.split(':')[0] || '0', 16);
      // ff00::/8 multicast, fe80::/10 link-local.
      return (first & 0xff00) !== 0xff00 && (first & 0xffc0) !== 0xfe80;
    }
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    v4 = `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  const [a, b] = v4.split('.').map(Number) as [number, number];
  if (v4 === '255.255.255.255' || v4 === '0.0.0.0' || a === 127) return false;
  if (a >= 224 && a <= 239) return false;
  return !(a === 169 && b === 254);
}
