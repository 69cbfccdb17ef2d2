import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AllocationBitmap } from './bitmap.js';
import { createMemoryIPRange, ipRangeMax, mustParseCIDR } from './ip-allocator.js';
import { PortAllocationOperation, createMemoryPortAllocator, parsePortRange } from './port-allocator.js';
import { parseServiceClusterIPRange, validateServiceClusterIPRange } from './ranges.js';

describe('AllocationBitmap (kube allocator.AllocationBitmap)', () => {
  it('snapshots as big.Int.Bytes(): bit i is offset i, big-endian, no leading zeros', () => {
    const b = new AllocationBitmap(254, '10.0.0.0/24');
    assert.deepEqual([...b.snapshot().data], []);
    b.allocate(0);
    assert.equal(b.snapshot().data.toString('base64'), 'AQ==');
    b.allocate(9);
    assert.deepEqual([...b.snapshot().data], [0x02, 0x01]);
    assert.equal(b.used(), 2);
    const c = new AllocationBitmap(254, '10.0.0.0/24');
    c.restore('10.0.0.0/24', b.snapshot().data);
    assert.ok(c.has(0) && c.has(9) && !c.has(1));
    assert.equal(c.free(), 252);
    assert.throws(() => c.restore('10.0.1.0/24', Buffer.alloc(0)), /the provided range does not match the current range/);
  });

  it('allocates every offset once, then is full', () => {
    const b = new AllocationBitmap(20, 'x');
    const got = new Set<number>();
    for (let i = 0; i < 20; i++) got.add(b.allocateNext()!);
    assert.equal(got.size, 20);
    assert.equal(b.allocateNext(), undefined);
    b.release(7);
    assert.equal(b.allocateNext(), 7);
  });
});

describe('cluster IP ranges (kube ipallocator.Range)', () => {
  it('excludes the network and IPv4 broadcast addresses and caps IPv6 at 65536', () => {
    assert.equal(ipRangeMax(mustParseCIDR('10.0.0.0/24')), 254);
    assert.equal(ipRangeMax(mustParseCIDR('10.0.0.0/29')), 6);
    assert.equal(ipRangeMax(mustParseCIDR('fd00::/120')), 255);
    assert.equal(ipRangeMax(mustParseCIDR('fd00::/108')), 65535);
  });

  it('maps IPs to offsets and refuses what is outside', async () => {
    const r = createMemoryIPRange(mustParseCIDR('10.0.0.0/29'));
    await r.allocate('10.0.0.1');
    await r.allocate('10.0.0.6');
    await assert.rejects(r.allocate('10.0.0.7'), /the provided IP \(10\.0\.0\.7\) is not in the valid range\. The range of valid IPs is 10\.0\.0\.0\/29/);
    await assert.rejects(r.allocate('10.0.0.0'), /not in the valid range/);
    await assert.rejects(r.allocate('10.0.0.1'), /^IPAllocationError: provided IP is already allocated$/);
    const all: string[] = [];
    for (let i = 0; i < 4; i++) all.push(await r.allocateNext());
    assert.deepEqual(all.sort(), ['10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5']);
    await assert.rejects(r.allocateNext(), /range is full/);
    assert.equal(await r.dryRun().allocateNext(), '10.0.0.0', "kube's dry run answers the network address");
  });
});

describe('node port ranges (kube portallocator, utilnet.PortRange)', () => {
  it('parses the flag syntaxes with kube\'s messages', () => {
    assert.deepEqual(parsePortRange('30000-32767'), { base: 30000, size: 2768 });
    assert.deepEqual(parsePortRange('30000+10'), { base: 30000, size: 11 });
    assert.deepEqual(parsePortRange('8080'), { base: 8080, size: 1 });
    assert.throws(() => parsePortRange('3-2'), /^Error: end port cannot be less than start port: 3-2$/);
    assert.throws(() => parsePortRange('1-70000'), /^Error: the port range cannot be greater than 65535: 1-70000$/);
    assert.throws(() => parsePortRange('a-b'), /^Error: strconv.Atoi: parsing "a": invalid syntax$/);
    assert.throws(() => parsePortRange('1+2-3'), /^Error: unable to parse port range: 1\+2-3$/);
  });

  it('takes ports at once and releases on commit, gives back on finish, takes nothing in a dry run', async () => {
    const pa = createMemoryPortAllocator(parsePortRange('30000-30009'));
    await pa.allocate(30001);
    const op = new PortAllocationOperation(pa, false);
    await op.allocate(30002);
    op.releaseDeferred(30001);
    await op.finish();
    assert.ok(await pa.has(30001), 'not committed: the deferred release did not happen');
    assert.ok(!(await pa.has(30002)), 'not committed: the allocation was given back');
    const op2 = new PortAllocationOperation(pa, false);
    await op2.allocate(30003);
    op2.releaseDeferred(30001);
    await op2.commit();
    await op2.finish();
    assert.ok(await pa.has(30003) && !(await pa.has(30001)));
    const dry = new PortAllocationOperation(pa, true);
    await assert.rejects(dry.allocate(30003), /provided port is already allocated/);
    assert.equal(await dry.allocateNext(), 32769);
    assert.equal(await dry.allocateNext(), 32770);
    await dry.allocate(30004);
    assert.ok(!(await pa.has(30004)));
    await assert.rejects(pa.allocate(29999), /^PortAllocationError: provided port is not in the valid range. The range of valid ports is 30000-30009$/);
  });
});

describe('--service-cluster-ip-range (kube-apiserver 1.24)', () => {
  it('defaults to 10.0.0.0/24 with 10.0.0.1 for the kubernetes Service', () => {
    const r = parseServiceClusterIPRange('');
    assert.equal(r.apiServerServiceIP, '10.0.0.1');
    assert.equal(r.primary.family, 'IPv4');
    assert.deepEqual(validateServiceClusterIPRange('', r), []);
  });

  it('reports kube\'s errors', () => {
    assert.throws(() => parseServiceClusterIPRange('10.0.0.0'), /^Error: service-cluster-ip-range\[0\] is not a valid cidr$/);
    assert.throws(() => parseServiceClusterIPRange('10.0.0.0/30'), /the service cluster IP range must be at least 8 IP addresses/);
    assert.throws(() => parseServiceClusterIPRange('10.0.0.0/24,x'), /^Error: service-cluster-ip-range\[1\] is not an ip net$/);
    const big = '10.0.0.0/8,10.1.0.0/16,fd00::/64';
    assert.deepEqual(validateServiceClusterIPRange(big, parseServiceClusterIPRange(big)), [
      '--service-cluster-ip-range must not contain more than two entries',
      'specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12',
      '--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family',
    ]);
    const dual = parseServiceClusterIPRange('fd00::/108,10.96.0.0/12');
    assert.equal(dual.apiServerServiceIP, 'fd00::1');
    assert.deepEqual(validateServiceClusterIPRange('fd00::/108,10.96.0.0/12', dual), []);
  });
});
