/** A create that holds a GuardKey (see interface.ts): the compare and range it adds to its txn. */
import type { GuardKey } from './interface.js';
import { StorageError } from './errors.js';
import { decodeObject } from './object-codec.js';

/** Most times a guarded create goes again after its guard key moved (see GuardKey). */
const GUARD_ATTEMPTS = 32;

/** A write holding a GuardKey: the compare and failure range it adds, and what a failure means. */
export class GuardedWrite {
  readonly #guard: GuardKey;
  readonly #key: Buffer;
  /** The revision held, asked of the guard when a create is first tried. */
  #revision: number | undefined;
  #attempts = 0;

  constructor(guard: GuardKey) {
    this.#guard = guard;
    this.#key = Buffer.from(guard.key);
  }

  compare(): { key: Buffer; target: 'Mod'; result: 'Equal'; mod_revision: number } {
    this.#revision ??= this.#guard.revision();
    return { key: this.#key, target: 'Mod', result: 'Equal', mod_revision: this.#revision };
  }

  range(): { request_range: { key: Buffer } } {
    return { request_range: { key: this.#key } };
  }

  /** The guard key as the failed txn read it: recheck (which may throw), then hold its new revision. */
  async moved(kv: { value: Buffer; mod_revision: string } | undefined): Promise<void> {
    const revision = kv ? Number(kv.mod_revision) : 0;
    await this.#guard.recheck(kv ? decodeObject(kv.value, revision) : undefined, revision);
    if (++this.#attempts >= GUARD_ATTEMPTS || revision === this.#revision) {
      throw new StorageError('Conflict', this.#guard.key, `${this.#guard.key} kept changing during the write`);
    }
    this.#revision = revision;
  }
}
