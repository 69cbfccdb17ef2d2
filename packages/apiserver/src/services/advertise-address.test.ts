import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type HostNetwork, resolveAdvertiseAddress } from './advertise-address.js';

const host = (routes: string | undefined, ifaces: Record<string, string[]>, v6routes = ''): HostNetwork => ({
  interfaces: () => Object.fromEntries(Object.entries(ifaces).map(([n, addrs]) => [n, addrs.map((address) => ({ address, family: address.includes(':') ? 'IPv6' : 'IPv4' }))])),
  routeFile: (name) => (name === 'route' ? routes : routes === undefined ? undefined : v6routes),
});

const ROUTES = 'Iface\tDestination\tGateway\tFlags\n' + 'eth1\t000200C0\t00000000\t0001\n' + 'eth0\t00000000\t010200C0\t0003\n';

test('advertise address: the flag, else a usable bind address, else the default-route interface (kube ResolveBindAddress)', () => {
  const net = host(ROUTES, { lo: ['127.0.0.1', '::1'], eth1: ['192.0.3.9'], eth0: ['fe80::1', '192.0.2.2', 'fd00::2'] });
  assert.equal(resolveAdvertiseAddress('10.1.1.1', '0.0.0.0', net), '10.1.1.1');
  assert.equal(resolveAdvertiseAddress('', '10.2.2.2', net), '10.2.2.2');
  assert.equal(resolveAdvertiseAddress('0.0.0.0', '127.0.0.1', net), '192.0.2.2', 'loopback binds advertise the host address, as kube');
  assert.equal(resolveAdvertiseAddress('', '0.0.0.0', net), '192.0.2.2');
  const v6only = host('Iface\tDestination\n', { eth0: ['fd00::2'] }, '00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000002 00000000 00000003     eth0\n');
  assert.equal(resolveAdvertiseAddress('', '::', v6only), 'fd00::2');
  assert.throws(() => resolveAdvertiseAddress('', '0.0.0.0', host('Iface\tDestination\n', { lo: ['127.0.0.1'] })), {
    message: `Unable to find suitable network address.error='no default routes found in "/proc/net/route" or "/proc/net/ipv6_route"'. Try to set the AdvertiseAddress directly or provide a valid BindAddress to fix this.`,
  });
  assert.equal(resolveAdvertiseAddress('', '0.0.0.0', host(undefined, { lo: ['127.0.0.1'], en0: ['169.254.1.1', '10.5.5.5'] })), '10.5.5.5', 'no /proc/net/route: any interface');
});
