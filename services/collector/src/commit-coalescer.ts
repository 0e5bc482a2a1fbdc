// Under load only the newest record per key matters: a group that commits ten times in a batch needs one
// event. Pure.
import { compareVersions, type Version } from '@offsetsync/contracts';
import type { GroupDeletedRecord, OffsetCommitRecord, OffsetDeletedRecord } from './offsets-topic-decoder.js';

export type PassedRecord = OffsetCommitRecord | OffsetDeletedRecord | GroupDeletedRecord;

export interface VersionedRecord {
  record: PassedRecord;
  version: Version;
}

function keyOf(record: PassedRecord): string {
  return record.kind === 'group-deleted'
    ? `g\u0000${record.group}`
    : `p\u0000${record.group}\u0000${record.topic}\u0000${record.partition}`;
}

/**
 * Keeps the newest record per (group, topic, partition) and per deleted group, in the order their newest
 * records appeared. Returns how many were dropped as superseded.
 */
export function coalesce(records: readonly VersionedRecord[]): {
  kept: VersionedRecord[];
  superseded: number;
} {
  const latest = new Map<string, VersionedRecord>();
  for (const item of records) {
    const key = keyOf(item.record);
    const seen = latest.get(key);
    if (seen === undefined || compareVersions(item.version, seen.version) > 0) {
      latest.delete(key);
      latest.set(key, item);
    }
  }
  return { kept: [...latest.values()], superseded: records.length - latest.size };
}
