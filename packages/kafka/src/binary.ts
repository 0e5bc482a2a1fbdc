// Kafka's primitive wire types (big-endian integers, length-prefixed strings, unsigned varints and the
// tagged fields of flexible versions), read and written over a Buffer. Reading past the end or a
// malformed length throws an OffsetSyncError with code DECODE_ERROR, never a RangeError.
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';

function truncated(what: string, at: number): OffsetSyncError {
  return new OffsetSyncError(`truncated input: ${what} at byte ${at}`, { code: ErrorCodes.DECODE_ERROR });
}

/** A cursor over Kafka-encoded bytes. */
export class KafkaReader {
  private position = 0;

  constructor(private readonly buffer: Buffer) {}

  get offset(): number {
    return this.position;
  }

  get remaining(): number {
    return this.buffer.length - this.position;
  }

  private take(size: number, what: string): number {
    if (size < 0 || this.position + size > this.buffer.length) throw truncated(what, this.position);
    const at = this.position;
    this.position += size;
    return at;
  }

  int8(): number {
    return this.buffer.readInt8(this.take(1, 'int8'));
  }

  int16(): number {
    return this.buffer.readInt16BE(this.take(2, 'int16'));
  }

  int32(): number {
    return this.buffer.readInt32BE(this.take(4, 'int32'));
  }

  /** An int64 as a JavaScript number; values beyond ±2^53 are refused rather than rounded. */
  int64(): number {
    const at = this.take(8, 'int64');
    const value = this.buffer.readBigInt64BE(at);
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new OffsetSyncError(`int64 ${value} at byte ${at} is beyond the safe integer range`, {
        code: ErrorCodes.DECODE_ERROR,
      });
    }
    return Number(value);
  }

  /** Unsigned LEB128 varint of at most 32 bits. */
  uvarint(): number {
    let result = 0;
    for (let shift = 0; shift <= 28; shift += 7) {
      const byte = this.buffer.readUInt8(this.take(1, 'varint'));
      result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
    }
    throw new OffsetSyncError(`varint longer than 5 bytes at byte ${this.position}`, {
      code: ErrorCodes.DECODE_ERROR,
    });
  }

  /** A string with an int16 length; -1 means null. */
  nullableString(): string | null {
    const length = this.int16();
    if (length === -1) return null;
    if (length < -1)
      throw new OffsetSyncError(`negative string length ${length}`, { code: ErrorCodes.DECODE_ERROR });
    return this.utf8(length);
  }

  string(): string {
    const value = this.nullableString();
    if (value === null)
      throw new OffsetSyncError(`null where a string is required at byte ${this.position}`, {
        code: ErrorCodes.DECODE_ERROR,
      });
    return value;
  }

  /** A string with an unsigned varint length plus one (flexible versions); 0 means null. */
  compactNullableString(): string | null {
    const lengthPlusOne = this.uvarint();
    if (lengthPlusOne === 0) return null;
    return this.utf8(lengthPlusOne - 1);
  }

  compactString(): string {
    const value = this.compactNullableString();
    if (value === null)
      throw new OffsetSyncError(`null where a string is required at byte ${this.position}`, {
        code: ErrorCodes.DECODE_ERROR,
      });
    return value;
  }

  /** A bool: one byte, anything but 0 is true. */
  boolean(): boolean {
    return this.int8() !== 0;
  }

  /** A compact array (flexible versions): unsigned varint count plus one, 0 meaning null. */
  compactNullableArray<T>(read: (reader: KafkaReader) => T): T[] | null {
    const countPlusOne = this.uvarint();
    if (countPlusOne === 0) return null;
    // Each element takes at least one byte: a count beyond what is left is malformed, not a huge array.
    if (countPlusOne - 1 > this.remaining) throw truncated('compact array', this.position);
    return Array.from({ length: countPlusOne - 1 }, () => read(this));
  }

  compactArray<T>(read: (reader: KafkaReader) => T): T[] {
    const value = this.compactNullableArray(read);
    if (value === null)
      throw new OffsetSyncError(`null where an array is required at byte ${this.position}`, {
        code: ErrorCodes.DECODE_ERROR,
      });
    return value;
  }

  bytes(length: number): Buffer {
    const at = this.take(length, 'bytes');
    return this.buffer.subarray(at, at + length);
  }

  /** A 16-byte UUID as Kafka prints it: URL-safe base64 without padding. */
  uuid(): string {
    return this.bytes(16).toString('base64url');
  }

  private utf8(length: number): string {
    return this.bytes(length).toString('utf8');
  }

  /**
   * Reads the tagged-field section of a flexible struct, handing each field to `onField` (which must
   * consume exactly `size` bytes or none); unknown tags are skipped, as the protocol requires.
   */
  taggedFields(onField: (tag: number, size: number, reader: KafkaReader) => boolean = () => false): void {
    const count = this.uvarint();
    for (let i = 0; i < count; i++) {
      const tag = this.uvarint();
      const size = this.uvarint();
      const start = this.position;
      if (!onField(tag, size, this)) this.take(size, `tagged field ${tag}`);
      else if (this.position !== start + size) {
        throw new OffsetSyncError(
          `tagged field ${tag} declared ${size} bytes but ${this.position - start} were read`,
          {
            code: ErrorCodes.DECODE_ERROR,
          },
        );
      }
    }
  }
}

/** Builds Kafka-encoded bytes. Used to make requests, fixtures and test records. */
export class KafkaWriter {
  private readonly chunks: Buffer[] = [];

  int8(value: number): this {
    const b = Buffer.alloc(1);
    b.writeInt8(value);
    return this.push(b);
  }

  int16(value: number): this {
    const b = Buffer.alloc(2);
    b.writeInt16BE(value);
    return this.push(b);
  }

  int32(value: number): this {
    const b = Buffer.alloc(4);
    b.writeInt32BE(value);
    return this.push(b);
  }

  int64(value: number | bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(BigInt(value));
    return this.push(b);
  }

  uvarint(value: number): this {
    const out: number[] = [];
    let rest = value;
    while (rest >= 0x80) {
      out.push((rest % 0x80) | 0x80);
      rest = Math.floor(rest / 0x80);
    }
    out.push(rest);
    return this.push(Buffer.from(out));
  }

  nullableString(value: string | null): this {
    if (value === null) return this.int16(-1);
    const bytes = Buffer.from(value, 'utf8');
    return this.int16(bytes.length).push(bytes);
  }

  compactNullableString(value: string | null): this {
    if (value === null) return this.uvarint(0);
    const bytes = Buffer.from(value, 'utf8');
    return this.uvarint(bytes.length + 1).push(bytes);
  }

  /** A compact array (flexible versions): unsigned varint count plus one, then each item. */
  compactArray<T>(items: readonly T[], write: (item: T) => void): this {
    this.uvarint(items.length + 1);
    for (const item of items) write(item);
    return this;
  }

  boolean(value: boolean): this {
    return this.int8(value ? 1 : 0);
  }

  raw(bytes: Uint8Array): this {
    return this.push(Buffer.from(bytes));
  }

  /** A tagged-field section holding the given fields, in tag order. */
  taggedFields(fields: ReadonlyArray<{ tag: number; value: Buffer }> = []): this {
    this.uvarint(fields.length);
    for (const field of [...fields].sort((a, b) => a.tag - b.tag)) {
      this.uvarint(field.tag).uvarint(field.value.length).push(field.value);
    }
    return this;
  }

  build(): Buffer {
    return Buffer.concat(this.chunks);
  }

  private push(bytes: Buffer): this {
    this.chunks.push(bytes);
    return this;
  }
}
