/**
 * A cheaper `AsyncResource#bind` for Node 20, installed once per process.
 *
 * Node 20's `ClientHttp2Session#request` wraps every new stream's start in
 * `AsyncResource#bind`, and that bind builds two `util.deprecate` wrappers for the deprecated
 * `asyncResource` property (DEP0172) of the function it returns. Each wrapper sets a function's
 * prototype to another function (nodejs/node#58218), so one bind costs ~8 µs on this project's
 * machines: ~17 µs of a ConfigMap create (two etcd calls) and ~25 µs of a Deployment update.
 * Node 24 stopped modifying the prototype there (nodejs/node#59195) and later releases drop the
 * property (nodejs/node#58618).
 *
 * The replacement keeps what callers use: the bound function runs `fn` in the resource's async
 * scope with the same `this` and arguments, and has `fn`'s `length`. Its own, enumerable
 * `asyncResource` property holds the resource, as Node's does, but as a plain value: reading it
 * does not report DEP0172 (nothing in this process reads it; Node 24 ends the property). A bind
 * costs ~0.1 µs.
 *
 * Nothing happens on a Node release whose bind does not take the slow path (checked once: the
 * accessor's getter of a probe bind is not a `util.deprecate` wrapper there).
 */
import { AsyncResource } from 'node:async_hooks';

type Bindable = (this: unknown, ...args: unknown[]) => unknown;

const nodeBind = AsyncResource.prototype.bind as unknown as (this: AsyncResource, fn: unknown, thisArg?: unknown) => Bindable;

function bind(this: AsyncResource, fn: Bindable, thisArg?: unknown): Bindable {
  // Node's own bind refuses a non-function with its ERR_INVALID_ARG_TYPE.
  if (typeof fn !== 'function') return nodeBind.call(this, fn, thisArg);
  let bound: Bindable;
  if (thisArg === undefined) {
    // The resource as it was at bind time, as Node's closure keeps it.
    const resource = this;
    bound = function (this: unknown, ...args: unknown[]): unknown {
      return resource.runInAsyncScope(fn, this, ...args);
    };
  } else {
    bound = this.runInAsyncScope.bind(this, fn, thisArg) as Bindable;
  }
  // Defining a property is the costly part (~0.5 µs each): `length` only when it differs (both
  // kinds of `bound` above start at 0; http2's functions have 0), `asyncResource` by assignment.
  if (fn.length !== bound.length) Object.defineProperty(bound, 'length', { configurable: true, enumerable: false, writable: false, value: fn.length });
  (bound as Bindable & { asyncResource: AsyncResource }).asyncResource = this;
  return bound;
}

let installed = false;

/** Whether this Node's own bind builds `util.deprecate` wrappers (its getter is one: named `deprecated`). */
function nodeBindIsSlow(): boolean {
  const probe = new AsyncResource('PlinthBindProbe').bind(() => undefined);
  const getter = Object.getOwnPropertyDescriptor(probe, 'asyncResource')?.get;
  return getter?.name === 'deprecated';
}

/** Installs the cheaper bind (see the file comment) once per process; true when it is in place. */
export function installFastAsyncResourceBind(): boolean {
  if (installed) return true;
  if (!nodeBindIsSlow()) return false;
  AsyncResource.prototype.bind = bind as typeof AsyncResource.prototype.bind;
  installed = true;
  return true;
}
