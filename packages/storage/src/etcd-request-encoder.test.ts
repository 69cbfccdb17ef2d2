import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';
import { encodeRangeFrame, encodeTxnFrame } from './etcd-request-encoder.js';

const proto = join(dirname(createRequire(import.meta.url).resolve('etcd3/package.json')), 'proto', 'rpc.proto');
const root = new protobuf.Root().loadSync(proto, { keepCase: true });
const TxnRequest = root.lookupType('etcdserverpb.TxnRequest');
const RangeRequest = root.lookupType('etcdserverpb.RangeRequest');

/** What FastKV sent before: protobufjs's encoding of etcd3's request object, framed. */
function reference(type: protobuf.Type, req: object): Buffer {
  const msg = type.encode(type.fromObject(req)).finish();
  const out = Buffer.alloc(5 + msg.length);
  out.writeUInt32BE(msg.length, 1);
  out.set(msg, 5);
  return out;
}

function assertSame(type: protobuf.Type, encode: (r: unknown) => Buffer | undefined, req: object): void {
  const mine = encode(req);
  assert.ok(mine, `not encoded: ${JSON.stringify(req)}`);
  assert.equal(mine.toString('hex'), reference(type, req).toString('hex'), JSON.stringify(req));
}

/** A small deterministic generator (xorshift32), so a failure names its seed. */
function rng(seed: number): () => number {
  let x = seed || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
}

describe('the etcd request encoder', () => {
  const key = Buffer.from('/registry/configmaps/ns/name');
  const value = Buffer.alloc(2000, 7);

  it("writes EtcdStore's requests byte for byte as protobufjs does", () => {
    const guard = { key: Buffer.from('/registry/guard'), target: 'Mod', result: 'Equal', mod_revision: 41 };
    const shapes: Array<[protobuf.Type, (r: unknown) => Buffer | undefined, object]> = [
      // create, with a lease (etcd3 gives lease IDs as decimal strings) and a guard key
      [TxnRequest, encodeTxnFrame, { compare: [{ key, target: 'Create', result: 'Equal', create_revision: 0 }], success: [{ request_put: { key, value } }], failure: [{ request_range: { key } }] }],
      [TxnRequest, encodeTxnFrame, { compare: [{ key, target: 'Create', result: 'Equal', create_revision: 0 }, guard], success: [{ request_put: { key, value, lease: '7587883204582412345' } }], failure: [{ request_range: { key } }, { request_range: { key: guard.key } }] }],
      // update and delete on mod_revision
      [TxnRequest, encodeTxnFrame, { compare: [{ key, target: 'Mod', result: 'Equal', mod_revision: 123456789 }], success: [{ request_put: { key, value, lease: 0 } }], failure: [{ request_range: { key } }] }],
      [TxnRequest, encodeTxnFrame, { compare: [{ key, target: 'Mod', result: 'Equal', mod_revision: 2 ** 40 }], success: [{ request_delete_range: { key, prev_kv: true } }], failure: [{ request_range: { key } }] }],
      // quorum reads batched in one txn, and single ranges
      [TxnRequest, encodeTxnFrame, { compare: [], success: [{ request_range: { key, keys_only: false } }, { request_range: { key, keys_only: true } }], failure: [] }],
      [RangeRequest, encodeRangeFrame, { key, keys_only: false }],
      [RangeRequest, encodeRangeFrame, { key: Buffer.from('\u0000plinth-revision-probe'), count_only: true }],
      [RangeRequest, encodeRangeFrame, { key, range_end: Buffer.from('/registry/configmaps0'), limit: 500, revision: 99, sort_order: 'Ascend', sort_target: 'Key' }],
      // the compactor's compare on a key's version
      [TxnRequest, encodeTxnFrame, { compare: [{ key, target: 'Version', result: 'Equal', version: 3 }], success: [{ request_put: { key, value: Buffer.from('x') } }], failure: [{ request_range: { key } }] }],
    ];
    for (const [type, encode, req] of shapes) assertSame(type, encode, req);
  });

  it('agrees with protobufjs on 3,000 random requests, or hands them to it', () => {
    const enumOr = (r: () => number, names: string[]): unknown => {
      const x = r();
      return x < 0.6 ? names[Math.floor(r() * names.length)] : x < 0.8 ? Math.floor(r() * names.length) : x < 0.9 ? 'NoSuchName' : undefined;
    };
    const int64 = (r: () => number): unknown => {
      const x = r();
      if (x < 0.2) return 0;
      if (x < 0.5) return Math.floor(r() * 300);
      if (x < 0.7) return Math.floor(r() * 2 ** 53);
      if (x < 0.8) return String(BigInt(Math.floor(r() * 2 ** 31)) * 4_294_967_296n + BigInt(Math.floor(r() * 2 ** 32)));
      if (x < 0.9) return null;
      return undefined;
    };
    const bytes = (r: () => number): unknown => {
      const x = r();
      if (x < 0.1) return undefined;
      if (x < 0.15) return Buffer.alloc(0);
      const n = x < 0.8 ? Math.floor(r() * 100) : Math.floor(r() * 20_000);
      const b = Buffer.alloc(n);
      for (let i = 0; i < n; i++) b[i] = Math.floor(r() * 256);
      return x < 0.5 ? b : new Uint8Array(b);
    };
    const bool = (r: () => number): unknown => (r() < 0.3 ? undefined : r() < 0.5);
    const some = (r: () => number, o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(o).filter(() => r() < 0.7));
    const range = (r: () => number): object =>
      some(r, { key: bytes(r), range_end: bytes(r), limit: int64(r), revision: int64(r), sort_order: enumOr(r, ['None', 'Ascend', 'Descend']), sort_target: enumOr(r, ['Key', 'Version', 'Create', 'Mod', 'Value']), serializable: bool(r), keys_only: bool(r), count_only: bool(r), min_mod_revision: int64(r), max_mod_revision: int64(r), min_create_revision: int64(r), max_create_revision: int64(r) });
    const compare = (r: () => number): object =>
      some(r, { result: enumOr(r, ['Equal', 'Greater', 'Less', 'NotEqual']), target: enumOr(r, ['Version', 'Create', 'Mod', 'Value', 'Lease']), key: bytes(r), version: int64(r), create_revision: int64(r), mod_revision: int64(r), value: bytes(r), lease: int64(r), range_end: bytes(r) });
    const op = (r: () => number, depth: number): object => {
      const x = r();
      if (x < 0.3) return { request_range: range(r) };
      if (x < 0.6) return { request_put: some(r, { key: bytes(r), value: bytes(r), lease: int64(r), prev_kv: bool(r), ignore_value: bool(r), ignore_lease: bool(r) }) };
      if (x < 0.8) return { request_delete_range: some(r, { key: bytes(r), range_end: bytes(r), prev_kv: bool(r) }) };
      if (x < 0.9 && depth < 3) return { request_txn: txn(r, depth + 1) };
      return {};
    };
    const list = <T>(r: () => number, f: () => T): T[] => Array.from({ length: Math.floor(r() * 4) }, f);
    const txn = (r: () => number, depth: number): object => some(r, { compare: list(r, () => compare(r)), success: list(r, () => op(r, depth)), failure: list(r, () => op(r, depth)) });
    // Forms left to protobufjs: it converts (base64 strings, negative or fractional numbers) or refuses them.
    const odd = (r: () => number, o: Record<string, unknown>): Record<string, unknown> => {
      const x = r();
      if (x < 0.9) return o;
      const k = x < 0.93 ? 'key' : x < 0.96 ? 'limit' : 'revision';
      return { ...o, [k]: x < 0.93 ? 'L3JlZ2lzdHJ5' : x < 0.96 ? -5 : 2.5 };
    };
    let direct = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const r = rng(seed);
      const [type, encode, req] = seed % 3 === 0 ? [RangeRequest, encodeRangeFrame, odd(r, range(r) as Record<string, unknown>)] as const : [TxnRequest, encodeTxnFrame, txn(r, 0)] as const;
      const mine = encode(req);
      if (!mine) continue;
      direct++;
      assert.equal(mine.toString('hex'), reference(type, req).toString('hex'), `seed ${seed}`);
    }
    // Nearly every generated request is in the encoder's forms.
    assert.ok(direct > 2800, `only ${direct} of 3000 encoded directly`);
  });

  it('hands forms it does not write to protobufjs', () => {
    assert.equal(encodeRangeFrame({ key: 'L3JlZ2lzdHJ5' }), undefined);
    assert.equal(encodeRangeFrame({ key, limit: -1 }), undefined);
    assert.equal(encodeRangeFrame({ key, revision: 1.5 }), undefined);
    assert.equal(encodeRangeFrame({ key, revision: '99999999999999999999' }), undefined);
    assert.equal(encodeTxnFrame({ compare: {} }), undefined);
    assert.equal(encodeTxnFrame(null), undefined);
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 10; i++) deep = { success: [{ request_txn: deep }] };
    assert.equal(encodeTxnFrame(deep), undefined);
  });
});
