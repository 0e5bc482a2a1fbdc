// The fingerprint that identifies a record's content across clusters: a replicator copies key and value
// bytes unchanged but may add headers (provenance, tracing), so headers are deliberately left out.
import { createHash } from 'node:crypto';

/** Length in bytes of the SHA-256 prefix a fingerprint keeps: 128 bits, collisions are not a concern. */
const FINGERPRINT_BYTES = 16;

/**
 * The content fingerprint of a record: the lowercase hex of the first 16 bytes of SHA-256 over
 * `int32 key length (-1 for null) | key | int32 value length (-1 for null) | value`.
 *
 * The length prefixes make the encoding unambiguous: a null key differs from an empty one, and moving the
 * boundary between key and value (`'ab' + 'c'` against `'a' + 'bc'`) changes the fingerprint.
 */
export function recordFingerprint(key: Buffer | null, value: Buffer | null): string {
  const hash = createHash('sha256');
  addField(hash, key);
  addField(hash, value);
  return hash.digest().subarray(0, FINGERPRINT_BYTES).toString('hex');
}

function addField(hash: ReturnType<typeof createHash>, bytes: Buffer | null): void {
  const length = Buffer.alloc(4);
  length.writeInt32BE(bytes === null ? -1 : bytes.length);
  hash.update(length);
  if (bytes !== null) hash.update(bytes);
}
