// What the collector does with one chunk of offsets-topic records, step by step:
//   1. decode   the records' bytes (offsets-topic-decoder.ts); undecodable ones are counted and skipped;
//   2. filter   what is passed on (commit-filter.ts); every other record is counted by why;
//   3. coalesce to the newest record per key (commit-coalescer.ts);
//   4. resolve  the anchors of all commits of the chunk together (anchor-resolver.ts);
//   5. build    the events (offset-events.ts);
//   6. publish  them, returning only once JetStream acknowledged every event.
// Steps 1, 2, 3 and 5 are pure. The worker lets the chunk's position be committed after that, so a crash
// re-emits (deduplicated by message id) and never loses a commit.
import { context, trace, type Tracer } from '@opentelemetry/api';
import { AnchorStatus, type Names } from '@offsetsync/contracts';
import { type StreamMessage } from '@offsetsync/jetstream';
import { failSpan, messagingSpan, type Logger } from '@offsetsync/runtime';
import type { AnchorResolution, AnchorResolver } from './anchor-resolver.js';
import { coalesce, type VersionedRecord } from './commit-coalescer.js';
import { filterRecords, type CommitFilter } from './commit-filter.js';
import { buildEvents, toStreamMessage, type OutgoingEvent } from './offset-events.js';
import {
  decodeRecords,
  type DecodedRecord,
  type RawOffsetsRecord,
  type UndecodableRecord,
} from './offsets-topic-decoder.js';
import type { OutcomeCounters } from './outcome-counters.js';

/** Options of {@link CollectorPipeline}. */
export interface CollectorPipelineOptions {
  names: Names;
  /** Alias of the source cluster. */
  source: string;
  filter: CommitFilter;
  resolver: AnchorResolver;
  /** Publishes messages; resolves once JetStream acknowledged every one. */
  publish: (messages: StreamMessage[]) => Promise<unknown>;
  counters: OutcomeCounters;
  logger: Logger;
  tracer: Tracer;
  /** Default: Date.now. */
  clock?: () => number;
}

/** The collector's steps from offsets-topic records to acknowledged events. */
export class CollectorPipeline {
  private readonly clock: () => number;
  private readonly reportedUndecodable = new Set<string>();
  /** When the last events were acknowledged (epoch ms); 0 before the first. */
  lastEventAtMs = 0;

  constructor(private readonly options: CollectorPipelineOptions) {
    this.clock = options.clock ?? Date.now;
  }

  /** Handles one chunk of one offsets-topic partition. Rejects (retryably) when publishing fails. */
  async handleBatch(offsetsPartition: number, records: readonly RawOffsetsRecord[]): Promise<void> {
    const observedAtMs = this.clock();
    const decoded = this.decode(offsetsPartition, records);
    const passed = this.filter(decoded);
    const kept = this.coalesce(passed);
    if (kept.length === 0) return;
    const resolutions = await this.resolveAnchors(kept);
    this.reportInvalidCommits(kept, resolutions);
    const { names, source } = this.options;
    const events = buildEvents(kept, resolutions, { names, source, observedAtMs });
    await this.publish(events);
    for (const item of kept) {
      this.options.counters.add(item.record.kind === 'offset-commit' ? 'committed' : 'deleted');
    }
    this.lastEventAtMs = this.clock();
  }

  /** Step 1: decodes the records; counts and skips those that do not decode. */
  private decode(offsetsPartition: number, records: readonly RawOffsetsRecord[]): DecodedRecord[] {
    const { decoded, undecodable } = decodeRecords(offsetsPartition, records);
    for (const record of undecodable) this.countUndecodable(record);
    return decoded;
  }

  /** Step 2: keeps what the filter passes; counts every other record by its outcome. */
  private filter(decoded: readonly DecodedRecord[]): VersionedRecord[] {
    const { passed, dropped } = filterRecords(decoded, this.options.filter);
    for (const outcome of dropped) this.options.counters.add(outcome);
    return passed;
  }

  /** Step 3: the newest record per key; counts the superseded ones. */
  private coalesce(passed: readonly VersionedRecord[]): VersionedRecord[] {
    const { kept, superseded } = coalesce(passed);
    this.options.counters.add('superseded', superseded);
    return kept;
  }

  /** Step 4: the anchors of every commit, looked up together. */
  private async resolveAnchors(
    kept: readonly VersionedRecord[],
  ): Promise<Map<VersionedRecord, AnchorResolution>> {
    const commits = kept.flatMap((item) =>
      item.record.kind === 'offset-commit' ? [{ item, record: item.record }] : [],
    );
    const resolutions = await this.options.resolver.resolve(commits.map(({ record }) => record));
    const byItem = new Map<VersionedRecord, AnchorResolution>();
    commits.forEach(({ item }, i) => {
      const resolution = resolutions[i];
      if (resolution !== undefined) byItem.set(item, resolution);
    });
    return byItem;
  }

  /** Commits past the log end are published as invalid (never translated); each is logged and counted. */
  private reportInvalidCommits(
    kept: readonly VersionedRecord[],
    resolutions: ReadonlyMap<VersionedRecord, AnchorResolution>,
  ): void {
    for (const item of kept) {
      if (item.record.kind !== 'offset-commit') continue;
      const resolution = resolutions.get(item);
      if (resolution?.status !== AnchorStatus.ANCHOR_STATUS_BEYOND_LOG_END) continue;
      this.options.logger.warn(
        {
          group: item.record.group,
          topic: item.record.topic,
          partition: item.record.partition,
          detail: resolution.detail,
        },
        'invalid commit: offset past the log end; published as invalid, it will not be translated',
      );
      this.options.counters.add('invalid_commit');
    }
  }

  /** Counts a record that cannot be decoded; logs each kind of problem once. */
  private countUndecodable(record: UndecodableRecord): void {
    const { offsetsPartition, offset, error, unknown, keyType, valueVersion } = record;
    if (unknown) this.options.counters.addUnknown(keyType, valueVersion);
    else this.options.counters.add('decode_error');
    const kind = `${unknown ? 'unknown' : 'malformed'}:${String(keyType)}:${String(valueVersion)}`;
    if (this.reportedUndecodable.has(kind)) return;
    this.reportedUndecodable.add(kind);
    this.options.logger.warn(
      { err: error, offsetsPartition, offset, keyType, valueVersion },
      unknown
        ? 'skipping offsets-topic records of an unknown type or version (logged once per type and version; counted)'
        : 'skipping a malformed offsets-topic record (logged once per kind; counted)',
    );
  }

  /**
   * Step 6: publishes the events. One span per event, the root of that offset's trace; its context travels
   * in the NATS headers.
   */
  private async publish(events: readonly OutgoingEvent[]): Promise<void> {
    const { names, source, tracer } = this.options;
    const subjectTemplate = names.committedFilter(source);
    const spans = events.map((event) => {
      const { name, options } = messagingSpan({
        operation: 'publish',
        stage: 'collect',
        subject: event.subject,
        subjectTemplate,
        messageId: event.msgId,
        attributes: {
          'offsetsync.source': source,
          'offsetsync.group': event.group,
          'offsetsync.topic': event.topic,
          'offsetsync.partition': event.partition,
          'offsetsync.event': event.event.type,
        },
      });
      return tracer.startSpan(name, options, context.active());
    });
    const messages = events.map((event, i) =>
      toStreamMessage(event, trace.setSpan(context.active(), spans[i]!)),
    );
    try {
      await this.options.publish(messages);
    } catch (error: unknown) {
      for (const span of spans) failSpan(span, error);
      throw error;
    } finally {
      for (const span of spans) span.end();
    }
  }
}
