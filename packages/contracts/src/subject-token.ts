// Kafka group ids may hold any character; NATS subject tokens may not hold '.', '*', '>' or
// whitespace, and JetStream KV keys accept only [-/_=.a-zA-Z0-9]. One encoding serves both:
// [A-Za-z0-9_-] stand for themselves, every other UTF-8 byte becomes '=' and two uppercase hex
// digits, and the empty string becomes a lone '=' (which no non-empty input can produce, since
// every '=' an encoded non-empty string holds is followed by two hex digits).
//
// Group ids have no length limit in Kafka (up to 32,767 characters), but a subject travels in the
// protocol's control line, which nats-server caps (max_control_line, 4 KB by default) and answers by
// closing the connection: one long group would stop every publish of a service. An encoding longer than
// MAX_TOKEN_LENGTH is therefore replaced by its first characters, '==' and the SHA-256 of the value
// (64 hex digits): still unique, deterministic (every service computes the same subject and KV key), but
// one-way. '==' cannot occur in a readable encoding, so the two forms never meet.
import { createHash } from 'node:crypto';

const KEPT = /^[A-Za-z0-9_-]$/;
const EMPTY_TOKEN = '=';
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Longest token kept readable. With a topic's token (at most 747 characters: 249, each escaped) and the
 * rest of a subject, a subject stays far below nats-server's 4,096-byte control line.
 */
export const MAX_TOKEN_LENGTH = 1_024;
/** Readable characters a hashed token keeps before its hash, for people reading subjects. */
const HASHED_HEAD_LENGTH = 64;
const HASHED_MARK = '==';

/**
 * Encodes any string into a non-empty token that is safe as a NATS subject token and a KV key part, at
 * most {@link MAX_TOKEN_LENGTH} characters long.
 */
export function encodeSubjectToken(value: string): string {
  const readable = readableToken(value);
  if (readable.length <= MAX_TOKEN_LENGTH) return readable;
  // Whole characters only, so what people read is not half an escape.
  let head = '';
  for (const char of value) {
    const encoded = readableToken(char);
    if (head.length + encoded.length > HASHED_HEAD_LENGTH) break;
    head += encoded;
  }
  return `${head}${HASHED_MARK}${createHash('sha256').update(value, 'utf8').digest('hex')}`;
}

function readableToken(value: string): string {
  if (value.length === 0) return EMPTY_TOKEN;
  let out = '';
  for (const char of value) {
    if (KEPT.test(char)) {
      out += char;
      continue;
    }
    for (const byte of encoder.encode(char)) out += `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * Inverse of {@link encodeSubjectToken}. Throws a RangeError on a token it could not have produced, and
 * on a hashed one (of a value too long to stay readable), which cannot be decoded.
 */
export function decodeSubjectToken(token: string): string {
  if (token === EMPTY_TOKEN) return '';
  if (token.includes(HASHED_MARK))
    throw new RangeError(`subject token '${token.slice(0, 80)}...' is hashed: its value cannot be read back`);
  if (token.length === 0) throw new RangeError('an empty subject token is not an encoded value');
  const bytes: number[] = [];
  for (let i = 0; i < token.length;) {
    const char = token.charAt(i);
    if (char === '=') {
      const hex = token.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) throw new RangeError(`bad escape at ${i} in subject token '${token}'`);
      bytes.push(Number.parseInt(hex, 16));
      i += 3;
    } else if (KEPT.test(char)) {
      bytes.push(char.charCodeAt(0));
      i += 1;
    } else {
      throw new RangeError(`character '${char}' cannot appear in a subject token`);
    }
  }
  let decoded: string;
  try {
    decoded = decoder.decode(new Uint8Array(bytes));
  } catch {
    throw new RangeError(`subject token '${token}' escapes bytes that are not UTF-8`);
  }
  // A token with an escaped byte that did not need escaping decodes fine but is not canonical; refusing
  // it keeps the mapping one-to-one.
  if (encodeSubjectToken(decoded) !== token)
    throw new RangeError(`subject token '${token}' is not canonical`);
  return decoded;
}
