// JetStream publishes and stream reads on the services' hot paths, answered through one reply
// subscription per connection.
//
// nats.js's request() (behind js.publish, kv.put and kv.get) allocates a timer and a muxed entry per
// request and, on every successful answer, a "cancelled" NatsError with a stack trace to reject an
// already settled promise. Under load that error alone was a tenth of the committer's busy time. Here an
// answer costs a map lookup and a JSON parse, and one interval timer enforces every deadline.
import {
  createInbox,
  headers as newHeaders,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription,
} from 'nats';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';

/** What JetStream answers to a stored publish. */
export interface PublishAck {
  stream: string;
  /** The message's sequence in the stream (a KV key's revision). */
  seq: number;
  /** True when the stream had seen the message id within its duplicate window and did not store it again. */
  duplicate: boolean;
}

export interface JetStreamPublishOptions {
  /** Becomes `Nats-Msg-Id`. */
  msgId?: string;
  /** Headers to send; the publisher adds its own to them. */
  headers?: MsgHdrs;
  /**
   * Becomes `Nats-Expected-Last-Subject-Sequence`: the stream stores the message only if the subject's
   * last message has this sequence (0: the subject holds none), and answers {@link WRONG_LAST_SEQUENCE}
   * otherwise. The compare-and-set of KV writes.
   */
  expectedLastSubjectSequence?: number;
}

/** A message read back from a stream. */
export interface StoredMessage {
  subject: string;
  seq: number;
  data: Uint8Array;
  /** Header values by lower-case name (the last value of a repeated header). */
  headers: ReadonlyMap<string, string>;
}

/** JetStream's error code for a publish whose expected last subject sequence did not match. */
export const WRONG_LAST_SEQUENCE = 10071;
/** JetStream's error code for a message get that found nothing. */
const NO_MESSAGE_FOUND = 10037;

/** JetStream answered a request with an API error (status code and JetStream error code). */
export class JetStreamApiError extends OffsetSyncError {
  constructor(
    readonly status: number,
    readonly errCode: number,
    description: string,
    subject: string,
  ) {
    super(`JetStream refused ${subject}: ${description} (${status}, ${errCode})`, {
      code: ErrorCodes.NATS_REJECTED,
      details: { subject, status, errCode },
    });
  }
}

interface Waiting {
  subject: string;
  deadline: number;
  settle: (answer: Msg | Error) => void;
}

/** Sweeps for expired requests this often at most. */
const MAX_SWEEP_MS = 250;
const EMPTY = new Uint8Array(0);

export class JetStreamPublisher {
  private readonly prefix: string;
  private readonly subscription: Subscription;
  private readonly waiting = new Map<string, Waiting>();
  /** Requests made during the current turn of the event loop, sent together by {@link flush}. */
  private readonly outbox: Array<{
    token: string;
    subject: string;
    payload: Uint8Array;
    hdrs: MsgHdrs | undefined;
  }> = [];
  private readonly sweeper: ReturnType<typeof setInterval>;
  private readonly timeoutMs: number;
  private next = 0;
  private closed = false;

  constructor(
    private readonly nc: NatsConnection,
    options: { timeoutMs?: number } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
    // Under the connection's inbox prefix: a NATS user may subscribe to its own replies only.
    this.prefix = `${createInbox((nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix)}.`;
    this.subscription = nc.subscribe(`${this.prefix}*`, {
      callback: (error, msg) => {
        if (error === null) this.answer(msg);
      },
    });
    this.sweeper = setInterval(
      () => this.expire(Date.now()),
      Math.max(10, Math.min(MAX_SWEEP_MS, this.timeoutMs / 4)),
    );
    this.sweeper.unref();
  }

  /** Publishes one message to a stream and resolves with JetStream's acknowledgement. */
  async publish(
    subject: string,
    payload: Uint8Array,
    options: JetStreamPublishOptions = {},
  ): Promise<PublishAck> {
    let hdrs = options.headers;
    if (options.msgId !== undefined || options.expectedLastSubjectSequence !== undefined) {
      hdrs ??= newHeaders();
      if (options.msgId !== undefined) hdrs.set('Nats-Msg-Id', options.msgId);
      if (options.expectedLastSubjectSequence !== undefined)
        hdrs.set('Nats-Expected-Last-Subject-Sequence', String(options.expectedLastSubjectSequence));
    }
    const answer = await this.request(subject, payload, hdrs);
    return parsePublishAck(subject, apiAnswer(subject, answer));
  }

  /** The last message of `subject` in `stream`, read from the stream's leader; undefined when there is none. */
  async lastMessage(stream: string, subject: string): Promise<StoredMessage | undefined> {
    const api = `$JS.API.STREAM.MSG.GET.${stream}`;
    const answer = await this.request(
      api,
      new TextEncoder().encode(JSON.stringify({ last_by_subj: subject })),
    );
    let body;
    try {
      body = apiAnswer(api, answer) as { message?: RawStoredMessage };
    } catch (error: unknown) {
      if (error instanceof JetStreamApiError && error.errCode === NO_MESSAGE_FOUND) return undefined;
      throw error;
    }
    if (body.message === undefined) throw malformed(api, 'no message in the answer');
    return storedMessage(body.message);
  }

  /** Stops answering: every request still waiting rejects. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    this.subscription.unsubscribe();
    const error = closedError();
    for (const waiting of this.waiting.values()) waiting.settle(error);
    this.waiting.clear();
  }

  private request(subject: string, payload: Uint8Array, hdrs?: MsgHdrs): Promise<Msg> {
    return new Promise<Msg>((resolve, reject) => {
      if (this.closed) {
        reject(closedError());
        return;
      }
      const token = (this.next++).toString(36);
      this.waiting.set(token, {
        subject,
        deadline: Date.now() + this.timeoutMs,
        settle: (answer) => (answer instanceof Error ? reject(answer) : resolve(answer)),
      });
      this.outbox.push({ token, subject, payload, hdrs });
      if (this.outbox.length === 1) setImmediate(this.flush);
    });
  }

  /**
   * Sends what was queued during this turn of the event loop. nats.js writes to its socket once per
   * microtask checkpoint, and a busy service has one after every I/O callback; sending once per turn
   * makes one socket write of what would have been many.
   */
  private readonly flush = (): void => {
    for (const { token, subject, payload, hdrs } of this.outbox.splice(0)) {
      const waiting = this.waiting.get(token);
      if (waiting === undefined) continue; // closed or expired meanwhile
      try {
        this.nc.publish(subject, payload, {
          reply: this.prefix + token,
          ...(hdrs === undefined ? {} : { headers: hdrs }),
        });
      } catch (error: unknown) {
        this.waiting.delete(token);
        waiting.settle(
          new OffsetSyncError(`could not send to ${subject}`, {
            code: ErrorCodes.NATS_UNREACHABLE,
            cause: error,
          }),
        );
      }
    }
  };

  private answer(msg: Msg): void {
    const token = msg.subject.slice(this.prefix.length);
    const waiting = this.waiting.get(token);
    if (waiting === undefined) return; // expired already
    this.waiting.delete(token);
    const status = msg.headers?.code ?? 0;
    if (status >= 400) {
      // 503: no responders, no stream takes the subject (or JetStream is not up yet).
      waiting.settle(
        new OffsetSyncError(
          status === 503
            ? `no JetStream stream answers ${waiting.subject}`
            : `NATS answered ${waiting.subject} with status ${status} ${msg.headers?.description ?? ''}`,
          { code: ErrorCodes.NATS_UNREACHABLE, details: { subject: waiting.subject, status } },
        ),
      );
      return;
    }
    waiting.settle(msg);
  }

  private expire(now: number): void {
    for (const [token, waiting] of this.waiting) {
      if (waiting.deadline > now) continue;
      this.waiting.delete(token);
      waiting.settle(
        new OffsetSyncError(`JetStream did not answer ${waiting.subject} within ${this.timeoutMs} ms`, {
          code: ErrorCodes.TIMEOUT,
          details: { subject: waiting.subject },
        }),
      );
    }
  }
}

interface RawStoredMessage {
  subject?: string;
  seq?: number;
  hdrs?: string;
  data?: string;
}

/** Parses a JSON API answer; throws {@link JetStreamApiError} for an `error` answer. */
function apiAnswer(subject: string, msg: Msg): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(msg.data));
  } catch {
    throw malformed(subject, 'not JSON');
  }
  if (typeof body !== 'object' || body === null) throw malformed(subject, 'not an object');
  const error = (body as { error?: { code?: number; err_code?: number; description?: string } }).error;
  if (error !== undefined) {
    throw new JetStreamApiError(error.code ?? 0, error.err_code ?? 0, error.description ?? 'error', subject);
  }
  return body as Record<string, unknown>;
}

function parsePublishAck(subject: string, body: Record<string, unknown>): PublishAck {
  const { stream, seq, duplicate } = body;
  if (typeof stream !== 'string' || typeof seq !== 'number') throw malformed(subject, 'no stream or seq');
  return { stream, seq, duplicate: duplicate === true };
}

function storedMessage(raw: RawStoredMessage): StoredMessage {
  return {
    subject: raw.subject ?? '',
    seq: raw.seq ?? 0,
    data: raw.data === undefined ? EMPTY : new Uint8Array(Buffer.from(raw.data, 'base64')),
    headers:
      raw.hdrs === undefined ? new Map() : parseHeaderBlock(Buffer.from(raw.hdrs, 'base64').toString('utf8')),
  };
}

/** The headers of a `NATS/1.0` header block, by lower-case name. */
export function parseHeaderBlock(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  const lines = block.split('\r\n');
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

function closedError(): OffsetSyncError {
  return new OffsetSyncError('JetStream publisher closed', { code: ErrorCodes.NATS_UNREACHABLE });
}

function malformed(subject: string, problem: string): OffsetSyncError {
  return new OffsetSyncError(`unexpected JetStream answer to ${subject}: ${problem}`, {
    code: ErrorCodes.DECODE_ERROR,
    details: { subject },
  });
}
