// Counts what the collector did with each offsets-topic record, for heartbeats and metrics.
import type { Counter, Meter } from '@opentelemetry/api';

export type CollectorOutcome =
  | 'committed'
  | 'deleted'
  | 'superseded'
  | 'invalid_commit'
  | 'filtered_own_group'
  | 'filtered_group'
  | 'filtered_topic'
  | 'filtered_offsetsync_commit'
  | 'group_metadata'
  | 'coordinator_record'
  | 'unknown_record'
  | 'decode_error';

export class OutcomeCounters {
  private readonly counts = new Map<string, number>();
  private readonly records: Counter;
  private readonly unknown: Counter;

  constructor(meter: Meter) {
    this.records = meter.createCounter('offsetsync_collector_records', {
      description: 'Offsets-topic records handled by the collector, by outcome.',
    });
    this.unknown = meter.createCounter('offsetsync_unknown_offsets_records', {
      description: 'Offsets-topic records of a type or value version this build does not know, skipped.',
    });
  }

  add(outcome: CollectorOutcome, count = 1): void {
    if (count === 0) return;
    this.counts.set(outcome, (this.counts.get(outcome) ?? 0) + count);
    this.records.add(count, { outcome });
  }

  addUnknown(keyType: number | undefined, valueVersion: number | undefined): void {
    this.add('unknown_record');
    this.unknown.add(1, { key_type: keyType ?? -1, value_version: valueVersion ?? -1 });
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }
}
