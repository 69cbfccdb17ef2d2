/**
 * Cluster IPs out of a service CIDR, as kube 1.24's `ipallocator.Range`
 * (pkg/registry/core/service/ipallocator/allocator.go): offset 0 is the first address after the
 * network address; an IPv4 range never hands out its network or broadcast address, an IPv6 one its
 * network (subnet-router anycast) address, and an IPv6 range is capped at 65,536 addresses (the
 * bitmap's size). `kubernetes.default` takes the first address, through the same allocator.
 */
import { type IPNet, bigIntToIP, cidrContains, cidrRangeSize, formatCIDR, formatIP, ipToBigInt, isIPv4Bytes, parseCIDR, parseIP } from '@plinth/api';
import { type AllocationBackend, createMemoryBackend } from './allocator.js';

/** kube's ipallocator errors, by kind; `message` is kube's text. */
export class IPAllocationError extends Error {
  readonly reason: 'Full' | 'Allocated' | 'NotInRange';
  constructor(reason: 'Full' | 'Allocated' | 'NotInRange', message: string) {
    super(message);
    this.name = 'IPAllocationError';
    this.reason = reason;
  }
}

export const isIPAllocationError = (e: unknown, reason?: IPAllocationError['reason']): e is IPAllocationError =>
  e instanceof IPAllocationError && (reason === undefined || e.reason === reason);

const errFull = (): IPAllocationError => new IPAllocationError('Full', 'range is full');
const errAllocated = (): IPAllocationError => new IPAllocationError('Allocated', 'provided IP is already allocated');

/** The allocation interface of a service CIDR (kube's ipallocator.Interface). IPs are strings. */
export interface IPAllocator {
  readonly cidr: IPNet;
  readonly family: 'IPv4' | 'IPv6';
  /** Takes the IP: IPAllocationError NotInRange or Allocated when it cannot. */
  allocate(ip: string): Promise<void>;
  /** Takes a free IP: IPAllocationError Full when none is left. */
  allocateNext(): Promise<string>;
  /** Frees the IP (a free or out-of-range IP: nothing happens). */
  release(ip: string): Promise<void>;
  has(ip: string): Promise<boolean>;
  forEach(fn: (ip: string) => void): Promise<void>;
  /** A view that checks but keeps nothing (kube's dry run: see `IPRange.dryRun`). */
  dryRun(): IPAllocator;
}

/** How many addresses a CIDR's bitmap has (kube's `max`). */
export function ipRangeMax(cidr: IPNet): number {
  let max = cidrRangeSize(cidr);
  if (cidr.family === 'IPv6') {
    if (max > 65536n) max = 65536n;
  } else {
    max -= 1n; // the broadcast address
  }
  max -= 1n; // the network address
  return Number(max < 0n ? 0n : max);
}

/** A service CIDR over an allocation backend. */
export class IPRange implements IPAllocator {
  readonly cidr: IPNet;
  readonly family: 'IPv4' | 'IPv6';
  readonly backend: AllocationBackend;
  readonly #base: bigint;
  readonly #max: number;

  constructor(cidr: IPNet, backend: AllocationBackend) {
    this.cidr = cidr;
    this.family = cidr.family;
    this.backend = backend;
    this.#base = ipToBigInt(cidr.ip) + 1n;
    this.#max = ipRangeMax(cidr);
  }

  /** The CIDR as the range spec kube stores ("10.0.0.0/24"). */
  get rangeSpec(): string {
    return formatCIDR(this.cidr);
  }

  /** The offset of an IP of this range, or undefined (kube's `contains`). */
  offsetOf(ip: string): number | undefined {
    const bytes = parseIP(ip);
    if (!bytes || !cidrContains(this.cidr, bytes)) return undefined;
    const offset = ipToBigInt(bytes) - this.#base;
    return offset < 0n || offset >= BigInt(this.#max) ? undefined : Number(offset);
  }

  ipAt(offset: number): string {
    return formatIP(bigIntToIP(this.#base + BigInt(offset), this.family));
  }

  #notInRange(ip: string): IPAllocationError {
    const bytes = parseIP(ip);
    // Go prints the parsed IP (canonical form).
    const shown = bytes ? formatIP(bytes) : ip;
    return new IPAllocationError('NotInRange', `the provided IP (${shown}) is not in the valid range. The range of valid IPs is ${this.rangeSpec}`);
  }

  async allocate(ip: string): Promise<void> {
    const offset = this.offsetOf(ip);
    if (offset === undefined) throw this.#notInRange(ip);
    if (!(await this.backend.allocate(offset))) throw errAllocated();
  }

  async allocateNext(): Promise<string> {
    const offset = await this.backend.allocateNext();
    if (offset === undefined) throw errFull();
    return this.ipAt(offset);
  }

  async release(ip: string): Promise<void> {
    const offset = this.offsetOf(ip);
    if (offset !== undefined) await this.backend.release(offset);
  }

  async has(ip: string): Promise<boolean> {
    const offset = this.offsetOf(ip);
    return offset !== undefined && (await this.backend.has(offset));
  }

  async forEach(fn: (ip: string) => void): Promise<void> {
    await this.backend.forEach((offset) => fn(this.ipAt(offset)));
  }

  async free(): Promise<number> {
    return this.backend.free();
  }

  /**
   * kube's dryRunRange: allocate checks only that the IP is in range (not whether it is free),
   * allocateNext answers the network address without taking anything, release does nothing.
   */
  dryRun(): IPAllocator {
    const real = this;
    return {
      cidr: real.cidr,
      family: real.family,
      async allocate(ip) {
        if (real.offsetOf(ip) === undefined) throw real.#notInRange(ip);
      },
      allocateNext: async () => formatIP(real.cidr.ip),
      release: async () => undefined,
      has: (ip) => real.has(ip),
      forEach: (fn) => real.forEach(fn),
      dryRun() {
        return this;
      },
    };
  }
}

/** An in-memory range over the CIDR (kube's `NewInMemory`), e.g. the repair loop's rebuilt state. */
export function createMemoryIPRange(cidr: IPNet): IPRange {
  return new IPRange(cidr, createMemoryBackend(ipRangeMax(cidr), formatCIDR(cidr)));
}

/** Parses a CIDR the way the allocator needs it; throws Go's message when it is none. */
export function mustParseCIDR(text: string): IPNet {
  const net = parseCIDR(text);
  if (net instanceof Error) throw net;
  return net;
}

/** The family of an IP string ('IPv4' also for IPv4-mapped IPv6), undefined when it is no IP. */
export function familyOfIP(ip: string): 'IPv4' | 'IPv6' | undefined {
  const bytes = parseIP(ip);
  if (!bytes) return undefined;
  return isIPv4Bytes(bytes) ? 'IPv4' : 'IPv6';
}
