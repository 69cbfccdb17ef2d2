/**
 * Node ports out of `--service-node-port-range`, as kube 1.24's `portallocator`
 * (pkg/registry/core/service/portallocator: allocator.go, operation.go) and apimachinery's
 * `net.PortRange` (the flag's syntax: `30000-32767`, `30000+2767` or one port).
 */
import { type AllocationBackend, createMemoryBackend } from './allocator.js';

/** A port range (kube's utilnet.PortRange): `size` ports from `base`. */
export interface PortRange {
  base: number;
  size: number;
}

/** `30000-32767` (kube's PortRange.String; '' for an empty range). */
export function formatPortRange(pr: PortRange): string {
  return pr.size === 0 ? '' : `${pr.base}-${pr.base + pr.size - 1}`;
}

/** Go's strconv.Atoi, with its error text. */
function atoi(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
  const n = Number(s);
  if (!Number.isSafeInteger(n) || Math.abs(n) > 2 ** 63 - 1) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(s)}: value out of range`);
  return n;
}

/** kube's `ParsePortRange` (PortRange.Set), with its error messages. */
export function parsePortRange(text: string): PortRange {
  const value = text.trim();
  if (value === '') return { base: 0, size: 0 };
  const hyphen = value.indexOf('-');
  const plus = value.indexOf('+');
  let low: number;
  let high: number;
  if (hyphen === -1 && plus === -1) {
    low = high = atoi(value);
  } else if (hyphen !== -1 && plus === -1) {
    low = atoi(value.slice(0, hyphen));
    high = atoi(value.slice(hyphen + 1));
  } else if (plus !== -1 && hyphen === -1) {
    low = atoi(value.slice(0, plus));
    high = low + atoi(value.slice(plus + 1));
  } else {
    throw new Error(`unable to parse port range: ${value}`);
  }
  if (low > 65535 || high > 65535) throw new Error(`the port range cannot be greater than 65535: ${value}`);
  if (high < low) throw new Error(`end port cannot be less than start port: ${value}`);
  return { base: low, size: 1 + high - low };
}

export class PortAllocationError extends Error {
  readonly reason: 'Full' | 'Allocated' | 'NotInRange';
  constructor(reason: 'Full' | 'Allocated' | 'NotInRange', message: string) {
    super(message);
    this.name = 'PortAllocationError';
    this.reason = reason;
  }
}

export const isPortAllocationError = (e: unknown, reason?: PortAllocationError['reason']): e is PortAllocationError =>
  e instanceof PortAllocationError && (reason === undefined || e.reason === reason);

/** The node ports of a range over an allocation backend (kube's PortAllocator). */
export class PortAllocator {
  readonly portRange: PortRange;
  readonly backend: AllocationBackend;

  constructor(portRange: PortRange, backend: AllocationBackend) {
    this.portRange = portRange;
    this.backend = backend;
  }

  get rangeSpec(): string {
    return formatPortRange(this.portRange);
  }

  contains(port: number): boolean {
    return port >= this.portRange.base && port - this.portRange.base < this.portRange.size;
  }

  /** Takes the port: PortAllocationError NotInRange or Allocated when it cannot. */
  async allocate(port: number): Promise<void> {
    if (!this.contains(port)) {
      throw new PortAllocationError('NotInRange', `provided port is not in the valid range. The range of valid ports is ${this.rangeSpec}`);
    }
    if (!(await this.backend.allocate(port - this.portRange.base))) throw new PortAllocationError('Allocated', 'provided port is already allocated');
  }

  /** Takes a free port: PortAllocationError Full when none is left. */
  async allocateNext(): Promise<number> {
    const offset = await this.backend.allocateNext();
    if (offset === undefined) throw new PortAllocationError('Full', 'range is full');
    return this.portRange.base + offset;
  }

  async release(port: number): Promise<void> {
    if (this.contains(port)) await this.backend.release(port - this.portRange.base);
  }

  async has(port: number): Promise<boolean> {
    return this.contains(port) && (await this.backend.has(port - this.portRange.base));
  }

  async forEach(fn: (port: number) => void): Promise<void> {
    await this.backend.forEach((offset) => fn(this.portRange.base + offset));
  }
}

/** An in-memory port allocator (kube's `NewInMemory`). */
export function createMemoryPortAllocator(pr: PortRange): PortAllocator {
  return new PortAllocator(pr, createMemoryBackend(pr.size, formatPortRange(pr)));
}

/**
 * kube's PortAllocationOperation: ports are taken at once, releases wait for `commit` (better to
 * leak a port than to hand it out twice); `finish` without `commit` gives back what was taken.
 * A dry run takes and releases nothing, but refuses ports that are taken.
 */
export class PortAllocationOperation {
  readonly #pa: PortAllocator;
  readonly #dryRun: boolean;
  readonly #allocated: number[] = [];
  readonly #releaseDeferred: number[] = [];
  #shouldRollback = true;

  constructor(pa: PortAllocator, dryRun: boolean) {
    this.#pa = pa;
    this.#dryRun = dryRun;
  }

  async allocate(port: number): Promise<void> {
    if (this.#dryRun) {
      if ((await this.#pa.has(port)) || this.#allocated.includes(port)) throw new PortAllocationError('Allocated', 'provided port is already allocated');
      this.#allocated.push(port);
      return;
    }
    await this.#pa.allocate(port);
    this.#allocated.push(port);
  }

  async allocateNext(): Promise<number> {
    if (this.#dryRun) {
      // kube answers a dummy port above the last one this operation took (from 32768).
      const last = this.#allocated.length === 0 ? 32768 : Math.max(...this.#allocated);
      this.#allocated.push(last + 1);
      return last + 1;
    }
    const port = await this.#pa.allocateNext();
    this.#allocated.push(port);
    return port;
  }

  releaseDeferred(port: number): void {
    this.#releaseDeferred.push(port);
  }

  /** Performs the deferred releases (errors are logged by the caller, never rolled back). */
  async commit(): Promise<unknown[]> {
    this.#shouldRollback = false;
    if (this.#dryRun) return [];
    const errs: unknown[] = [];
    for (const port of this.#releaseDeferred) await this.#pa.release(port).catch((e: unknown) => errs.push(e));
    return errs;
  }

  /** Gives back what was taken, unless committed. */
  async finish(): Promise<unknown[]> {
    if (!this.#shouldRollback || this.#dryRun) return [];
    this.#shouldRollback = false;
    const errs: unknown[] = [];
    for (const port of this.#allocated) await this.#pa.release(port).catch((e: unknown) => errs.push(e));
    return errs;
  }
}
