import { describe, expect, it } from 'vitest';
import { parseHeaderBlock } from './jetstream-publisher.js';

describe('parseHeaderBlock', () => {
  it('reads the headers of a stored message by lower-case name', () => {
    const block = 'NATS/1.0\r\nKV-Operation: DEL\r\nNats-Msg-Id: a:b:1\r\nX-Empty:\r\n\r\n';
    expect(parseHeaderBlock(block)).toEqual(
      new Map([
        ['kv-operation', 'DEL'],
        ['nats-msg-id', 'a:b:1'],
        ['x-empty', ''],
      ]),
    );
  });

  it('keeps a colon inside a value and ignores lines without a name', () => {
    const headers = parseHeaderBlock('NATS/1.0\r\ntraceparent: 00-ab:cd\r\n: nameless\r\nnonsense\r\n\r\n');
    expect([...headers]).toEqual([['traceparent', '00-ab:cd']]);
  });
});
