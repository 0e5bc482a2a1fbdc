// Snappy, LZ4 and ZSTD for kafkajs, which ships only GZIP. Real topics are often compressed; without these
// codecs no record of such a batch can be read. Every codec here is plain JavaScript or WebAssembly
// bundled in its npm package: nothing is compiled or downloaded at install time.
//
// kafkajs looks codecs up in its module-global `CompressionCodecs` table, so registering once per process
// serves every kafkajs client, the adapter's and those built from `KafkaAdapter.kafka`.
import { createRequire } from 'node:module';
import { decompress as zstdDecompress } from 'fzstd';
import kafkajs from 'kafkajs';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';

const { CompressionCodecs, CompressionTypes } = kafkajs;

/** The codec shape kafkajs expects (`kafkajs/src/protocol/message/compression`). */
export interface KafkajsCompressionCodec {
  /** Compresses the bytes of a record batch; kafkajs hands over its Encoder. */
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  /** Decompresses the records part of a batch. */
  decompress(buffer: Buffer): Promise<Buffer>;
}

// The codec packages ship no type declarations; these are the parts used, checked when loaded.
interface SnappyJs {
  compress(input: Buffer): Buffer;
  uncompress(input: Buffer, maxLength?: number): Buffer;
}
interface Lz4Js {
  decompress(input: Uint8Array, maxSize?: number): Uint8Array;
  compressBound(size: number): number;
  compressBlock(
    src: Uint8Array,
    dst: Uint8Array,
    srcIndex: number,
    srcLength: number,
    hashTable: Uint32Array,
  ): number;
}
interface Xxh32 {
  hash(seed: number, src: Uint8Array, index: number, length: number): number;
}
interface ZstdStreaming {
  compress(input: Uint8Array, level?: number): Uint8Array | null;
}
interface ZstdCodecModule {
  ZstdCodec: { run(onReady: (zstd: { Streaming: new () => ZstdStreaming }) => void): void };
}

const require = createRequire(import.meta.url);

function load<T>(name: string, members: readonly string[], read: (m: Record<string, unknown>) => unknown): T {
  const loaded: unknown = require(name);
  const holder = read(loaded as Record<string, unknown>);
  for (const member of members) {
    if (typeof (holder as Record<string, unknown> | undefined)?.[member] !== 'function') {
      throw new OffsetSyncError(`compression package ${name} lacks ${member}(); was it upgraded?`, {
        code: ErrorCodes.INTERNAL,
      });
    }
  }
  return holder as T;
}

/** Upper bound of one decompressed chunk: a guard against corrupt length fields, far above real batches. */
const MAX_DECOMPRESSED_BYTES = 512 * 1024 * 1024;

function decodeFailure(codec: string, cause: unknown): OffsetSyncError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new OffsetSyncError(`cannot decompress ${codec} record batch: ${reason}`, {
    code: ErrorCodes.DECODE_ERROR,
    cause,
    details: { codec },
  });
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

// --- Snappy -------------------------------------------------------------------------------------------
// Java clients write Snappy in xerial's framing (a 16-byte header, then chunks each prefixed with its
// int32 length); other clients write one raw Snappy block. Both are read; xerial framing is written, as
// the Java producer does, so every consumer understands it.

const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_BYTES = 16;
const XERIAL_CHUNK_BYTES = 32 * 1024;

function createSnappyCodec(snappy: SnappyJs): KafkajsCompressionCodec {
  return {
    compress(encoder) {
      const input = encoder.buffer;
      const header = Buffer.alloc(XERIAL_HEADER_BYTES);
      XERIAL_MAGIC.copy(header, 0);
      header.writeInt32BE(1, 8); // format version
      header.writeInt32BE(1, 12); // oldest compatible version
      const parts: Buffer[] = [header];
      for (let at = 0; at < input.length; at += XERIAL_CHUNK_BYTES) {
        const chunk = snappy.compress(input.subarray(at, at + XERIAL_CHUNK_BYTES));
        const length = Buffer.alloc(4);
        length.writeInt32BE(chunk.length);
        parts.push(length, chunk);
      }
      return Promise.resolve(Buffer.concat(parts));
    },
    decompress(buffer) {
      try {
        return Promise.resolve(snappyDecompress(snappy, buffer));
      } catch (cause: unknown) {
        return Promise.reject(decodeFailure('snappy', cause));
      }
    },
  };
}

function snappyDecompress(snappy: SnappyJs, buffer: Buffer): Buffer {
  const framed =
    buffer.length >= XERIAL_HEADER_BYTES && buffer.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC);
  if (!framed) return snappy.uncompress(buffer, MAX_DECOMPRESSED_BYTES);
  const parts: Buffer[] = [];
  let at = XERIAL_HEADER_BYTES;
  while (at < buffer.length) {
    if (at + 4 > buffer.length) throw new Error(`truncated xerial chunk length at byte ${at}`);
    const length = buffer.readInt32BE(at);
    at += 4;
    if (length < 0 || at + length > buffer.length) throw new Error(`bad xerial chunk length ${length}`);
    parts.push(snappy.uncompress(buffer.subarray(at, at + length), MAX_DECOMPRESSED_BYTES));
    at += length;
  }
  return Buffer.concat(parts);
}

// --- LZ4 ----------------------------------------------------------------------------------------------
// Kafka (record batch v2) uses the standard LZ4 frame format. lz4js reads any frame. It writes frames
// with 4 MiB dependent blocks, which the Java reader is not built for, so the frame is written here:
// 64 KiB independent blocks and no checksums, the layout of Java's KafkaLZ4BlockOutputStream.

const LZ4_MAGIC = 0x184d2204;
const LZ4_FLG = 0x60; // version 01, block independence, no block/content checksum, no content size
const LZ4_BD = 0x40; // maximum block size 64 KiB
const LZ4_BLOCK_BYTES = 64 * 1024;
const LZ4_UNCOMPRESSED_BLOCK = 0x80000000;

function createLz4Codec(lz4: Lz4Js, xxh32: Xxh32): KafkajsCompressionCodec {
  return {
    compress(encoder) {
      return Promise.resolve(lz4Compress(lz4, xxh32, encoder.buffer));
    },
    decompress(buffer) {
      try {
        return Promise.resolve(asBuffer(lz4.decompress(buffer)));
      } catch (cause: unknown) {
        return Promise.reject(decodeFailure('lz4', cause));
      }
    },
  };
}

function lz4Compress(lz4: Lz4Js, xxh32: Xxh32, input: Buffer): Buffer {
  const header = Buffer.alloc(7);
  header.writeUInt32LE(LZ4_MAGIC, 0);
  header[4] = LZ4_FLG;
  header[5] = LZ4_BD;
  header[6] = (xxh32.hash(0, header, 4, 2) >>> 8) & 0xff;
  const parts: Buffer[] = [header];
  const hashTable = new Uint32Array(1 << 16);
  const scratch = Buffer.alloc(lz4.compressBound(LZ4_BLOCK_BYTES));
  for (let at = 0; at < input.length; at += LZ4_BLOCK_BYTES) {
    // Each block is compressed from offset 0 of its own slice with a fresh table, so it refers to
    // nothing outside itself.
    const block = input.subarray(at, at + LZ4_BLOCK_BYTES);
    hashTable.fill(0);
    const size = lz4.compressBlock(block, scratch, 0, block.length, hashTable);
    const blockHeader = Buffer.alloc(4);
    if (size > 0 && size < block.length) {
      blockHeader.writeUInt32LE(size);
      parts.push(blockHeader, Buffer.from(scratch.subarray(0, size)));
    } else {
      blockHeader.writeUInt32LE((LZ4_UNCOMPRESSED_BLOCK | block.length) >>> 0);
      parts.push(blockHeader, block);
    }
  }
  parts.push(Buffer.alloc(4)); // end mark
  return Buffer.concat(parts);
}

// --- ZSTD ---------------------------------------------------------------------------------------------
// Reading uses fzstd (plain JavaScript), which takes frames of unknown content size as Java's streaming
// writer produces, and has no fixed memory ceiling. Writing uses zstd-codec (WebAssembly), whose heap is
// fixed: it aborts beyond roughly 10 MiB and stays broken afterwards, so larger inputs (and any failure)
// are written as a valid frame of raw, uncompressed blocks instead.

const ZSTD_CODEC_MAX_INPUT_BYTES = 4 * 1024 * 1024;
const ZSTD_LEVEL = 3;
const ZSTD_RAW_BLOCK_BYTES = 128 * 1024;

function createZstdCodec(loadZstdCodec: () => Promise<ZstdStreaming>): KafkajsCompressionCodec {
  let streaming: Promise<ZstdStreaming> | undefined;
  let broken = false;
  return {
    async compress(encoder) {
      const input = encoder.buffer;
      if (broken || input.length > ZSTD_CODEC_MAX_INPUT_BYTES) return zstdRawFrame(input);
      try {
        streaming ??= loadZstdCodec();
        const compressed = (await streaming).compress(input, ZSTD_LEVEL);
        if (compressed !== null) return Buffer.from(compressed);
      } catch {
        // An Emscripten abort leaves the module unusable: stop calling it, keep producing valid frames.
        broken = true;
      }
      return zstdRawFrame(input);
    },
    decompress(buffer) {
      try {
        return Promise.resolve(asBuffer(zstdDecompress(buffer)));
      } catch (cause: unknown) {
        return Promise.reject(decodeFailure('zstd', cause));
      }
    },
  };
}

/**
 * A Zstandard frame holding `input` in raw blocks: no content size, a 128 KiB window (raw blocks refer to
 * nothing), no checksum. Any decoder reads it; it is only as large as the input plus a few bytes.
 */
export function zstdRawFrame(input: Buffer): Buffer {
  const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38]); // magic, descriptor, window 2^17
  const parts: Buffer[] = [header];
  let at = 0;
  do {
    const size = Math.min(ZSTD_RAW_BLOCK_BYTES, input.length - at);
    const last = at + size >= input.length ? 1 : 0;
    const blockHeader = Buffer.alloc(3);
    blockHeader.writeUIntLE(last | (size << 3), 0, 3); // block type 0 = raw
    parts.push(blockHeader, input.subarray(at, at + size));
    at += size;
  } while (at < input.length);
  return Buffer.concat(parts);
}

function loadZstdStreaming(): Promise<ZstdStreaming> {
  const module = load<ZstdCodecModule['ZstdCodec']>('zstd-codec', ['run'], (m) => m.ZstdCodec);
  return new Promise((resolve) => module.run((zstd) => resolve(new zstd.Streaming())));
}

// --- registration -------------------------------------------------------------------------------------

/** The codecs offsetsync adds to kafkajs. */
export interface OffsetSyncCodecs {
  snappy: KafkajsCompressionCodec;
  lz4: KafkajsCompressionCodec;
  zstd: KafkajsCompressionCodec;
}

let codecs: OffsetSyncCodecs | undefined;

/** The codecs {@link registerCompressionCodecs} installs, built once. Exposed for tests. */
export function compressionCodecs(): OffsetSyncCodecs {
  codecs ??= {
    snappy: createSnappyCodec(load<SnappyJs>('snappyjs', ['compress', 'uncompress'], (m) => m)),
    lz4: createLz4Codec(
      load<Lz4Js>('lz4js', ['decompress', 'compressBound', 'compressBlock'], (m) => m),
      load<Xxh32>('lz4js/xxh32.js', ['hash'], (m) => m),
    ),
    zstd: createZstdCodec(loadZstdStreaming),
  };
  return codecs;
}

/**
 * Registers Snappy, LZ4 and ZSTD in kafkajs' codec table (GZIP is built in). Idempotent; safe to call
 * from every constructor that needs compressed topics. Affects every kafkajs client in the process.
 */
export function registerCompressionCodecs(): void {
  const { snappy, lz4, zstd } = compressionCodecs();
  CompressionCodecs[CompressionTypes.Snappy] = () => snappy;
  CompressionCodecs[CompressionTypes.LZ4] = () => lz4;
  CompressionCodecs[CompressionTypes.ZSTD] = () => zstd;
}
