import { describe, expect, it } from 'vitest';
import { demoRecords, demoStopOffsets, RECORDS_PER_TIMESTAMP } from './demo-workload.js';

describe('demo workload', () => {
  const records = demoRecords(3, 1_000, 1_700_000_000_000);

  it('gives every record a unique value and lets runs of records share a timestamp', () => {
    const values = records.flat().map((r) => r.value);
    expect(new Set(values).size).toBe(3_000);
    const partition = records[0]!;
    expect(
      partition.slice(0, RECORDS_PER_TIMESTAMP).every((r) => r.timestampMs === partition[0]!.timestampMs),
    ).toBe(true);
    expect(partition[RECORDS_PER_TIMESTAMP]!.timestampMs).toBe(partition[0]!.timestampMs + 1);
  });

  it('stops each partition inside a run of records with one timestamp, past half the partition', () => {
    const stops = demoStopOffsets(3, 1_000);
    stops.forEach((stop, p) => {
      const partition = records[p]!;
      expect(stop).toBeGreaterThan(500);
      expect(stop).toBeLessThan(1_000);
      expect(partition[stop - 1]!.timestampMs).toBe(partition[stop]!.timestampMs);
    });
    expect(() => demoStopOffsets(1, 5)).toThrow(RangeError);
  });
});
