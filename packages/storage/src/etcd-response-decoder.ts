/**
 * etcd's RangeResponse and TxnResponse read straight from their bytes into the objects FastKV's
 * callers get: what protobufjs's `toObject(decode(bytes), { longs: String, enums: String,
 * defaults: true, oneofs: true })` gives for etcd3's rpc.proto (every field present, absent ones
 * at their defaults; 64-bit integers as decimal strings; bytes as Buffers over the response;
 * ResponseOp's `response` naming its member; members in protobufjs's order, repeated fields
 * first, so JSON.stringify gives the same text), without protobufjs's message instances, Long
 * objects and option checks in between: ~5-10 µs of a write's answer in a busy server.
 *
 * Unknown fields are skipped by their wire type, as protobufjs does. A response it cannot read
 * (a group wire type, a length past the end, deeper nesting than MAX_TXN_DEPTH) answers
 * `undefined` and the caller decodes with protobufjs, which reads or refuses it.
 */

/** Nested TxnResponses (ResponseOp.response_txn) read here; deeper ones go to protobufjs. */
const MAX_TXN_DEPTH = 4;

class Unreadable {}
const UNREADABLE = new Unreadable();

const TWO_POW_32 = 0x1_0000_0000;

type Obj = Record<string, unknown>;

/**
 * The last large unsigned values converted: every response's header repeats the cluster and
 * member IDs, which are above 2^53 and would each take a BigInt conversion.
 */
const bigCache: Array<[lo: number, hi: number, text: string]> = [];
const BIG_CACHE_SIZE = 8;

function bigUint64String(lo: number, hi: number): string {
  for (const [l, h, text] of bigCache) if (l === lo && h === hi) return text;
  const text = ((BigInt(hi) << 32n) | BigInt(lo)).toString();
  if (bigCache.length >= BIG_CACHE_SIZE) bigCache.shift();
  bigCache.push([lo, hi, text]);
  return text;
}

class In {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }
  more(): boolean {
    return this.pos < this.end;
  }
  byte(): number {
    if (this.pos >= this.end) throw UNREADABLE;
    return this.buf[this.pos++]!;
  }
  /** A varint that fits 32 bits (tags, lengths); protobufjs keeps the low 32 bits of longer ones. */
  uint32(): number {
    let value = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      if (shift < 28) value |= (b & 0x7f) << shift;
      else if (shift === 28) value |= (b & 0x0f) << 28;
      if (b < 0x80) return value >>> 0;
      shift += 7;
      if (shift > 63) throw UNREADABLE;
    }
  }
  /** A 64-bit varint as its low and high 32-bit halves. */
  varint64(): [lo: number, hi: number] {
    let lo = 0;
    let hi = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      const b = this.byte();
      const bits = b & 0x7f;
      if (shift < 28) lo |= bits << shift;
      else if (shift === 28) {
        lo |= (bits & 0x0f) << 28;
        hi |= bits >> 4;
      } else if (shift < 64) hi |= bits << (shift - 32);
      if (b < 0x80) return [lo >>> 0, hi >>> 0];
    }
    throw UNREADABLE;
  }
  uint64String(): string {
    const [lo, hi] = this.varint64();
    if (hi < 0x200000) return String(hi * TWO_POW_32 + lo);
    return bigUint64String(lo, hi);
  }
  int64String(): string {
    const [lo, hi] = this.varint64();
    if (hi < 0x200000) return String(hi * TWO_POW_32 + lo);
    return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo)).toString();
  }
  /** protobufjs reads a bool as a 32-bit varint: its low 32 bits decide. */
  bool(): boolean {
    return this.varint64()[0] !== 0;
  }
  /** A length-delimited field's bounds. */
  delimited(): [start: number, end: number] {
    const len = this.uint32();
    const start = this.pos;
    if (len > this.end - start) throw UNREADABLE;
    this.pos = start + len;
    return [start, start + len];
  }
  bytes(): Buffer {
    const [start, end] = this.delimited();
    return this.buf.subarray(start, end);
  }
  skip(wire: number): void {
    if (wire === 0) this.varint64();
    else if (wire === 1) this.advance(8);
    else if (wire === 2) this.delimited();
    else if (wire === 5) this.advance(4);
    else throw UNREADABLE;
  }
  advance(n: number): void {
    if (n > this.end - this.pos) throw UNREADABLE;
    this.pos += n;
  }
  /** A nested message: read by `read` within its bounds. */
  message<T>(read: (r: In) => T): T {
    const [start, end] = this.delimited();
    return read(new In(this.buf, start, end));
  }
}

/** Reads a message's fields: `field` handles the known ones and answers false for the others. */
function fields(r: In, field: (num: number, wire: number) => boolean): void {
  while (r.more()) {
    const tag = r.uint32();
    const num = tag >>> 3;
    const wire = tag & 7;
    if (num === 0 || !field(num, wire)) r.skip(wire);
  }
}

// A known field's wire type must be the declared one; protobufjs reads it anyway: let it.
function expect(wire: number, want: number): void {
  if (wire !== want) throw UNREADABLE;
}

function header(r: In): Obj {
  const h: Obj = { cluster_id: '0', member_id: '0', revision: '0', raft_term: '0' };
  fields(r, (num, wire) => {
    if (num > 4) return false;
    expect(wire, 0);
    if (num === 1) h['cluster_id'] = r.uint64String();
    else if (num === 2) h['member_id'] = r.uint64String();
    else if (num === 3) h['revision'] = r.int64String();
    else h['raft_term'] = r.uint64String();
    return true;
  });
  return h;
}

const EMPTY = Buffer.alloc(0);

function keyValue(r: In): Obj {
  const kv: Obj = { key: EMPTY, create_revision: '0', mod_revision: '0', version: '0', value: EMPTY, lease: '0' };
  fields(r, (num, wire) => {
    switch (num) {
      case 1:
        expect(wire, 2);
        kv['key'] = r.bytes();
        return true;
      case 2:
        expect(wire, 0);
        kv['create_revision'] = r.int64String();
        return true;
      case 3:
        expect(wire, 0);
        kv['mod_revision'] = r.int64String();
        return true;
      case 4:
        expect(wire, 0);
        kv['version'] = r.int64String();
        return true;
      case 5:
        expect(wire, 2);
        kv['value'] = r.bytes();
        return true;
      case 6:
        expect(wire, 0);
        kv['lease'] = r.int64String();
        return true;
      default:
        return false;
    }
  });
  return kv;
}

function rangeResponse(r: In): Obj {
  const kvs: Obj[] = [];
  const res: Obj = { kvs, header: null, more: false, count: '0' };
  fields(r, (num, wire) => {
    if (num === 1) {
      expect(wire, 2);
      res['header'] = r.message(header);
    } else if (num === 2) {
      expect(wire, 2);
      kvs.push(r.message(keyValue));
    } else if (num === 3) {
      expect(wire, 0);
      res['more'] = r.bool();
    } else if (num === 4) {
      expect(wire, 0);
      res['count'] = r.int64String();
    } else return false;
    return true;
  });
  return res;
}

function putResponse(r: In): Obj {
  const res: Obj = { header: null, prev_kv: null };
  fields(r, (num, wire) => {
    if (num === 1) {
      expect(wire, 2);
      res['header'] = r.message(header);
    } else if (num === 2) {
      expect(wire, 2);
      res['prev_kv'] = r.message(keyValue);
    } else return false;
    return true;
  });
  return res;
}

function deleteRangeResponse(r: In): Obj {
  const prevKvs: Obj[] = [];
  const res: Obj = { prev_kvs: prevKvs, header: null, deleted: '0' };
  fields(r, (num, wire) => {
    if (num === 1) {
      expect(wire, 2);
      res['header'] = r.message(header);
    } else if (num === 2) {
      expect(wire, 0);
      res['deleted'] = r.int64String();
    } else if (num === 3) {
      expect(wire, 2);
      prevKvs.push(r.message(keyValue));
    } else return false;
    return true;
  });
  return res;
}

const OP_MEMBERS = ['response_range', 'response_put', 'response_delete_range', 'response_txn'] as const;

function responseOp(r: In, depth: number): Obj {
  const op: Obj = {};
  fields(r, (num, wire) => {
    if (num < 1 || num > 4) return false;
    expect(wire, 2);
    if (num === 1) op['response_range'] = r.message(rangeResponse);
    else if (num === 2) op['response_put'] = r.message(putResponse);
    else if (num === 3) op['response_delete_range'] = r.message(deleteRangeResponse);
    else op['response_txn'] = r.message((n) => txnResponse(n, depth + 1));
    return true;
  });
  // protobufjs names the last member present in field order.
  for (const m of OP_MEMBERS) if (m in op) op['response'] = m;
  return op;
}

function txnResponse(r: In, depth: number): Obj {
  if (depth > MAX_TXN_DEPTH) throw UNREADABLE;
  const responses: Obj[] = [];
  const res: Obj = { responses, header: null, succeeded: false };
  fields(r, (num, wire) => {
    if (num === 1) {
      expect(wire, 2);
      res['header'] = r.message(header);
    } else if (num === 2) {
      expect(wire, 0);
      res['succeeded'] = r.bool();
    } else if (num === 3) {
      expect(wire, 2);
      responses.push(r.message((n) => responseOp(n, depth)));
    } else return false;
    return true;
  });
  return res;
}

function read(buf: Buffer, start: number, end: number, message: (r: In) => Obj): Obj | undefined {
  try {
    return message(new In(buf, start, end));
  } catch (e) {
    if (e === UNREADABLE) return undefined;
    throw e;
  }
}

/** A RangeResponse's object from its message bytes (`buf` from `start`), or undefined: protobufjs reads it. */
export function decodeRangeResponse(buf: Buffer, start = 0): Obj | undefined {
  return read(buf, start, buf.length, rangeResponse);
}

/** A TxnResponse's object from its message bytes (`buf` from `start`), or undefined: protobufjs reads it. */
export function decodeTxnResponse(buf: Buffer, start = 0): Obj | undefined {
  return read(buf, start, buf.length, (r) => txnResponse(r, 0));
}
