import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import kafkajs from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { compressionCodecs, registerCompressionCodecs, zstdRawFrame } from './compression-codecs.js';

const { CompressionCodecs, CompressionTypes } = kafkajs;
const require = createRequire(import.meta.url);

// Independent encoders/decoders to check the frames against, loaded the way the module loads them.
const snappyjs = require('snappyjs') as { compress(b: Buffer): Buffer };
const lz4js = require('lz4js') as {
  compress(b: Uint8Array): Uint8Array;
  decompress(b: Uint8Array): Uint8Array;
};
interface ZstdModule {
  ZstdCodec: {
    run(
      f: (z: {
        Simple: new () => { compress(b: Uint8Array): Uint8Array | null };
        Streaming: new () => { decompress(b: Uint8Array): Uint8Array | null };
      }) => void,
    ): void;
  };
}
const zstdModule = require('zstd-codec') as ZstdModule;

/** Something compressible with a random part, like a real record batch. */
function sample(size: number): Buffer {
  const text = Buffer.from('offsetsync record batch '.repeat(Math.ceil(size / 24) + 1)).subarray(0, size);
  const noise = randomBytes(Math.floor(size / 4));
  noise.copy(text, Math.floor(size / 3));
  return text;
}

const sizes = [0, 1, 13, 1000, 32 * 1024, 32 * 1024 + 1, 64 * 1024 + 7, 300_000];

describe('compression codecs', () => {
  it('registers Snappy, LZ4 and ZSTD with kafkajs, idempotently', () => {
    registerCompressionCodecs();
    registerCompressionCodecs();
    const codecs = compressionCodecs();
    expect(CompressionCodecs[CompressionTypes.Snappy]()).toBe(codecs.snappy);
    expect(CompressionCodecs[CompressionTypes.LZ4]()).toBe(codecs.lz4);
    expect(CompressionCodecs[CompressionTypes.ZSTD]()).toBe(codecs.zstd);
  });

  for (const name of ['snappy', 'lz4', 'zstd'] as const) {
    it(`${name} round-trips batches of every size`, async () => {
      const codec = compressionCodecs()[name];
      for (const size of sizes) {
        const input = sample(size);
        const compressed = await codec.compress({ buffer: input });
        expect((await codec.decompress(compressed)).equals(input)).toBe(true);
      }
    });

    it(`${name} round-trips arbitrary bytes`, async () => {
      const codec = compressionCodecs()[name];
      await fc.assert(
        fc.asyncProperty(fc.uint8Array({ maxLength: 5000 }), async (bytes) => {
          const input = Buffer.from(bytes);
          const output = await codec.decompress(await codec.compress({ buffer: input }));
          expect(output.equals(input)).toBe(true);
        }),
        { numRuns: 50 },
      );
    });

    it(`${name} rejects garbage with DECODE_ERROR`, async () => {
      const codec = compressionCodecs()[name];
      const garbage = Buffer.from('definitely not a compressed record batch');
      await expect(codec.decompress(garbage)).rejects.toMatchObject({ code: 'DECODE_ERROR' });
    });
  }

  it('snappy reads raw Snappy blocks as well as xerial framing', async () => {
    const input = sample(100_000);
    const raw = snappyjs.compress(input);
    expect((await compressionCodecs().snappy.decompress(raw)).equals(input)).toBe(true);
  });

  it('snappy writes xerial framing as the Java producer does', async () => {
    const framed = await compressionCodecs().snappy.compress({ buffer: sample(1000) });
    expect(framed.subarray(0, 8).toString('hex')).toBe('82534e4150505900');
  });

  it('lz4 reads frames of other writers (lz4js: 4 MiB blocks) and writes frames lz4js reads', async () => {
    const input = sample(200_000);
    const foreign = Buffer.from(lz4js.compress(input));
    expect((await compressionCodecs().lz4.decompress(foreign)).equals(input)).toBe(true);
    const ours = await compressionCodecs().lz4.compress({ buffer: input });
    expect(Buffer.from(lz4js.decompress(ours)).equals(input)).toBe(true);
    // FLG: version 01 + independent blocks; BD: 64 KiB blocks.
    expect(ours.subarray(0, 6).toString('hex')).toBe('04224d186040');
  });

  it('zstd reads frames with a content size and writes frames another decoder reads', async () => {
    const zstd = await new Promise<Parameters<Parameters<ZstdModule['ZstdCodec']['run']>[0]>[0]>((resolve) =>
      zstdModule.ZstdCodec.run(resolve),
    );
    const input = sample(150_000);
    const withSize = new zstd.Simple().compress(input);
    if (withSize === null) throw new Error('zstd-codec could not compress the sample');
    expect((await compressionCodecs().zstd.decompress(Buffer.from(withSize))).equals(input)).toBe(true);

    const ours = await compressionCodecs().zstd.compress({ buffer: input });
    expect(ours.length).toBeLessThan(input.length);
    const decoded = new zstd.Streaming().decompress(ours);
    expect(decoded !== null && Buffer.from(decoded).equals(input)).toBe(true);
  });

  it('zstd writes inputs too large for the WebAssembly heap as raw-block frames', async () => {
    const input = randomBytes(5 * 1024 * 1024);
    const compressed = await compressionCodecs().zstd.compress({ buffer: input });
    expect(compressed.equals(zstdRawFrame(input))).toBe(true);
    expect((await compressionCodecs().zstd.decompress(compressed)).equals(input)).toBe(true);
  });

  it('zstd raw-block frames are read by an independent decoder', async () => {
    const zstd = await new Promise<Parameters<Parameters<ZstdModule['ZstdCodec']['run']>[0]>[0]>((resolve) =>
      zstdModule.ZstdCodec.run(resolve),
    );
    for (const size of [0, 1, 128 * 1024, 128 * 1024 + 1, 400_000]) {
      const input = randomBytes(size);
      const decoded = new zstd.Streaming().decompress(zstdRawFrame(input));
      expect(decoded !== null && Buffer.from(decoded).equals(input)).toBe(true);
    }
  });
});
