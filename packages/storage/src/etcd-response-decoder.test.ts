import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';
import { decodeRangeResponse, decodeTxnResponse } from './etcd-response-decoder.js';

const proto = join(dirname(createRequire(import.meta.url).resolve('etcd3/package.json')), 'proto', 'rpc.proto');
const root = new protobuf.Root().loadSync(proto, { keepCase: true });
const TxnResponse = root.lookupType('etcdserverpb.TxnResponse');
const RangeResponse = root.lookupType('etcdserverpb.RangeResponse');
const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

/** What FastKV's callers got before: protobufjs's object for the message bytes. */
const reference = (type: protobuf.Type, bytes: Buffer): unknown => type.toObject(type.decode(bytes), TO_OBJECT);
const encode = (type: protobuf.Type, o: object): Buffer => Buffer.from(type.encode(type.fromObject(o)).finish());

/** xorshift32: a failure names its seed. */
function rng(seed: number): () => number {
  let x = seed || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
}

describe('the etcd response decoder', () => {
  it("reads EtcdStore's answers as protobufjs does", () => {
    const key = Buffer.from('/registry/configmaps/ns/name');
    const value = Buffer.alloc(3000, 9);
    const header = { cluster_id: '14841639068965178418', member_id: '10276657743932975437', revision: '123456', raft_term: '2' };
    const kv = { key, create_revision: 100, mod_revision: 123456, version: 3, value, lease: '7587883204582412345' };
    const cases: Array<[protobuf.Type, (b: Buffer, s?: number) => unknown, object]> = [
      [TxnResponse, decodeTxnResponse, { header, succeeded: true, responses: [{ response_put: { header } }] }],
      [TxnResponse, decodeTxnResponse, { header, succeeded: false, responses: [{ response_range: { header, kvs: [kv], count: 1 } }] }],
      [TxnResponse, decodeTxnResponse, { header, succeeded: true, responses: [{ response_delete_range: { header, deleted: 1, prev_kvs: [kv] } }] }],
      [TxnResponse, decodeTxnResponse, { header, succeeded: true, responses: [{ response_range: { header, kvs: [], count: 0 } }, { response_range: { header, kvs: [kv, { ...kv, lease: 0 }], more: true, count: 2 } }] }],
      [TxnResponse, decodeTxnResponse, { header }],
      [TxnResponse, decodeTxnResponse, {}],
      [RangeResponse, decodeRangeResponse, { header, kvs: [kv], more: false, count: 1 }],
      [RangeResponse, decodeRangeResponse, { header, count: 0 }],
    ];
    for (const [type, decode, o] of cases) {
      const bytes = encode(type, o);
      assert.deepEqual(decode(bytes), reference(type, bytes), JSON.stringify(o));
      // As FastKV calls it: the message after the 5-byte gRPC prefix of its frame.
      assert.deepEqual(decode(Buffer.concat([Buffer.from([0, 0, 0, 0, bytes.length]), bytes]), 5), reference(type, bytes));
    }
  });

  it('agrees with protobufjs on 3,000 random responses, unknown fields and odd integers included', () => {
    const int64 = (r: () => number): unknown => {
      const x = r();
      if (x < 0.3) return undefined;
      if (x < 0.5) return Math.floor(r() * 300);
      if (x < 0.7) return Math.floor(r() * 2 ** 53);
      if (x < 0.85) return String(BigInt(Math.floor(r() * 2 ** 32)) * 4_294_967_296n + BigInt(Math.floor(r() * 2 ** 32)) - (x < 0.78 ? 0n : 2n ** 63n));
      return -Math.floor(r() * 1000);
    };
    const uint64 = (r: () => number): unknown => {
      const v = int64(r);
      return typeof v === 'string' ? (BigInt.asUintN(64, BigInt(v))).toString() : typeof v === 'number' ? Math.abs(v) : v;
    };
    const bytes = (r: () => number): unknown => (r() < 0.2 ? undefined : Buffer.from(Array.from({ length: Math.floor(r() * (r() < 0.9 ? 40 : 5000)) }, () => Math.floor(r() * 256))));
    const some = (r: () => number, o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && r() < 0.75));
    const header = (r: () => number): unknown => (r() < 0.2 ? undefined : some(r, { cluster_id: uint64(r), member_id: uint64(r), revision: int64(r), raft_term: uint64(r) }));
    const kv = (r: () => number): object => some(r, { key: bytes(r), create_revision: int64(r), mod_revision: int64(r), version: int64(r), value: bytes(r), lease: int64(r) });
    const list = <T>(r: () => number, f: () => T): T[] => Array.from({ length: Math.floor(r() * 4) }, f);
    const range = (r: () => number): object => some(r, { header: header(r), kvs: list(r, () => kv(r)), more: r() < 0.5, count: int64(r) });
    const op = (r: () => number, depth: number): object => {
      const x = r();
      if (x < 0.35) return { response_range: range(r) };
      if (x < 0.65) return { response_put: some(r, { header: header(r), prev_kv: r() < 0.5 ? kv(r) : undefined }) };
      if (x < 0.85) return { response_delete_range: some(r, { header: header(r), deleted: int64(r), prev_kvs: list(r, () => kv(r)) }) };
      if (x < 0.95 && depth < 3) return { response_txn: txn(r, depth + 1) };
      return {};
    };
    const txn = (r: () => number, depth: number): object => some(r, { header: header(r), succeeded: r() < 0.5, responses: list(r, () => op(r, depth)) });
    /** Fields this proto does not know, which both skip: varint, 64-bit, length-delimited and 32-bit. */
    const unknown = (r: () => number): Buffer => {
      const x = r();
      if (x < 0.7) return Buffer.alloc(0);
      if (x < 0.8) return Buffer.from([(12 << 3) | 0, 0xff, 0xff, 0x03]);
      if (x < 0.9) return Buffer.from([(13 << 3) | 1, 1, 2, 3, 4, 5, 6, 7, 8]);
      if (x < 0.95) return Buffer.from([(14 << 3) | 2, 3, 9, 9, 9]);
      return Buffer.from([(15 << 3) | 5, 1, 2, 3, 4]);
    };
    let direct = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const r = rng(seed);
      const [type, decode] = seed % 3 === 0 ? [RangeResponse, decodeRangeResponse] as const : [TxnResponse, decodeTxnResponse] as const;
      const o = type === RangeResponse ? range(r) : txn(r, 0);
      const bytes = Buffer.concat([unknown(r), encode(type, o), unknown(r)]);
      const mine = decode(bytes);
      if (mine === undefined) continue;
      direct++;
      const theirs = reference(type, bytes);
      assert.deepEqual(mine, theirs, `seed ${seed}`);
      // Members in the same order too: the same JSON text (logs, error messages).
      assert.equal(JSON.stringify(mine), JSON.stringify(theirs), `seed ${seed}`);
    }
    assert.equal(direct, 3000);
  });

  it('hands responses it cannot read to protobufjs', () => {
    // A length past the end, a group wire type, a truncated varint.
    assert.equal(decodeTxnResponse(Buffer.from([(1 << 3) | 2, 50, 1, 2])), undefined);
    assert.equal(decodeRangeResponse(Buffer.from([(9 << 3) | 3])), undefined);
    assert.equal(decodeTxnResponse(Buffer.from([(2 << 3) | 0, 0x80])), undefined);
    // A known field with another wire type than its own.
    assert.equal(decodeTxnResponse(Buffer.from([(2 << 3) | 2, 0])), undefined);
  });
});
