// Reads of one partition shared by requests at nearby offsets. Kafka takes one fetch position per
// partition per Fetch request, so requests for several offsets of the same partition used to become as
// many Fetches, each returning (and decoding) its own copy of the same batches: at a bootstrap, where
// thousands of groups sit on a few partitions, that was most of the collector's and translator's work.
// Here requests are planned into reads (one start offset each), and every request is answered from the
// read that starts at or before it, when that read reached it. Pure functions; the adapter does the I/O.
import type { FetchAnswer, FetchRequest } from '../types.js';

/** Rounds of {@link readShared}: shared reads, narrower shared reads, a read per offset. */
const SHARED_READ_ROUNDS = 3;

/**
 * Answers `requests` (in their order) through `fetchEach`, which reads each given request once. The first
 * round reads each partition once from its lowest offset; a second round reads what the first did not
 * reach with reads as wide as the first ones turned out; a last round gives each remaining offset its own
 * read, so every request is answered.
 */
export async function readShared(
  requests: readonly FetchRequest[],
  fetchEach: (reads: FetchRequest[]) => Promise<FetchAnswer[]>,
): Promise<FetchAnswer[]> {
  const answers = new Array<FetchAnswer>(requests.length);
  let pending = requests.map((_, index) => index);
  const spans = new Map<string, number>();
  for (let round = 0; pending.length > 0; round++) {
    const last = round >= SHARED_READ_ROUNDS - 1;
    const asked = pending.map((index) => requests[index]!);
    const plan = planSharedReads(asked, (key) => (last ? 1 : (spans.get(key) ?? Infinity)));
    const reads = await fetchEach(plan.map((p) => p.read));
    const again: number[] = [];
    plan.forEach((planned, k) => {
      const read = reads[k]!;
      const key = readKey(planned.read);
      if (read.error === undefined) spans.set(key, Math.min(spans.get(key) ?? Infinity, coveredSpan(read)));
      for (const j of planned.requests) {
        const answer = answerFromRead(read, asked[j]!.offset);
        if (answer === undefined) again.push(pending[j]!);
        else answers[pending[j]!] = answer;
      }
    });
    pending = again;
  }
  return answers;
}

/** One planned read, and the requests (indexes into the planned list) it should answer. */
export interface PlannedRead {
  read: FetchRequest;
  requests: number[];
}

/**
 * Groups requests into reads. Per partition, in offset order, a request starts a new read unless it lies
 * less than `span(partition)` offsets after the start of the current read (and asks the leader about the
 * same `currentLeaderEpoch`). A span of 1 gives every
 * distinct offset its own read; Infinity one read per partition. A read asks for the largest `maxBytes`
 * of its requests.
 */
export function planSharedReads(
  requests: readonly FetchRequest[],
  span: (partitionKey: string) => number,
): PlannedRead[] {
  const byPartition = new Map<string, number[]>();
  requests.forEach((request, index) => {
    const key = readKey(request);
    const list = byPartition.get(key);
    if (list === undefined) byPartition.set(key, [index]);
    else list.push(index);
  });
  const reads: PlannedRead[] = [];
  for (const [key, indexes] of byPartition) {
    const width = Math.max(1, span(key));
    indexes.sort((a, b) => requests[a]!.offset - requests[b]!.offset);
    let current: PlannedRead | undefined;
    for (const index of indexes) {
      const request = requests[index]!;
      if (
        current === undefined ||
        request.offset - current.read.offset >= width ||
        request.currentLeaderEpoch !== current.read.currentLeaderEpoch
      ) {
        current = {
          read: {
            topic: request.topic,
            partition: request.partition,
            offset: request.offset,
            maxBytes: request.maxBytes,
            ...(request.currentLeaderEpoch === undefined
              ? {}
              : { currentLeaderEpoch: request.currentLeaderEpoch }),
          },
          requests: [index],
        };
        reads.push(current);
      } else {
        current.requests.push(index);
        current.read.maxBytes = largerBytes(current.read.maxBytes, request.maxBytes);
      }
    }
  }
  return reads;
}

/**
 * The answer to a request at `offset` from a read that started at or before it, or undefined when the
 * read did not reach the offset or failed (ask again with a read of its own). A read reached the offset when it
 * started there, or returned whole batches up to or past it (`nextOffset` beyond it): its records from
 * the offset on are then what a read from the offset would have returned first.
 */
export function answerFromRead(read: FetchAnswer, offset: number): FetchAnswer | undefined {
  if (offset === read.requestedOffset) return read;
  // The failure may be the start's own (an offset before the log start): the offset gets a read of its own.
  if (read.error !== undefined) return undefined;
  if (offset >= read.nextOffset) return undefined;
  return { ...read, requestedOffset: offset, records: read.records.filter((r) => r.offset >= offset) };
}

/** How many offsets a read covered (at least 1): the span to plan with for that partition next time. */
function coveredSpan(read: FetchAnswer): number {
  return Math.max(1, read.nextOffset - read.requestedOffset);
}

function readKey(tp: { topic: string; partition: number }): string {
  return `${tp.partition}:${tp.topic}`;
}

function largerBytes(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || b === undefined) return undefined; // the default is the largest
  return Math.max(a, b);
}
