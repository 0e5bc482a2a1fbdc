import { describe, expect, it } from 'vitest';
import { parseGcTrace, summarizeGc } from './gc-trace.js';

// Lines as Node.js 20 prints them with --trace-gc, between the service's JSON log lines.
const LOG = [
  '{"level":30,"time":1,"msg":"health starting"}',
  '[17419:0x195afd90]       41 ms: Scavenge 3.9 (4.0) -> 3.7 (5.0) MB, 3.60 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure; ',
  '[17433:0x3cc2dd90]      266 ms: Mark-Compact 73.6 (90.9) -> 54.6 (88.6) MB, 23.15 / 0.00 ms  (+ 40.2 ms in 55 steps since start of marking, biggest step 14.0 ms, walltime since start of marking 78 ms) (average mu = 1.000, current mu = 1.000) finalize incremental marking via stack guard; GC in old space requested',
  '{"level":30,"time":2,"msg":"health gRPC API served"}',
  '[17433:0x3cc2dd90]     9001 ms: Mark-Compact (reduce) 80.0 (95.0) -> 50.5 (70.0) MB, 12.00 / 0.00 ms  (average mu = 0.990, current mu = 0.980) memory reducer; GC in old space requested',
  '[17433:0x3cc2dd90]     9100 ms: Scavenge 52.0 (70.0) -> 51.0 (70.0) MB, 1.00 / 0.00 ms  (average mu = 0.990, current mu = 0.980) allocation failure; ',
].join('\n');

describe('parseGcTrace', () => {
  it('reads each collection and passes over the JSON log lines', () => {
    const events = parseGcTrace(LOG);
    expect(events.map((e) => e.kind)).toEqual(['Scavenge', 'Mark-Compact', 'Mark-Compact', 'Scavenge']);
    expect(events[1]).toEqual({
      atMs: 266,
      kind: 'Mark-Compact',
      beforeMb: 73.6,
      afterMb: 54.6,
      committedMb: 88.6,
      mainThreadMs: 23.15 + 40.2,
    });
    expect(events[2]?.afterMb).toBe(50.5);
  });
});

describe('summarizeGc', () => {
  it('gives the heap after the last full collection, the peak before any, and the main-thread time', () => {
    expect(summarizeGc(parseGcTrace(LOG))).toEqual({
      collections: 4,
      full_collections: 2,
      main_thread_s: 0.08,
      heap_after_last_full_mb: 50.5,
      heap_reserved_after_last_full_mb: 70,
      last_full_at_ms: 9001,
      heap_peak_mb: 80,
    });
  });

  it('says null when no full collection ran', () => {
    const summary = summarizeGc(parseGcTrace(LOG.split('\n').slice(0, 2).join('\n')));
    expect(summary.heap_after_last_full_mb).toBeNull();
    expect(summary.collections).toBe(1);
  });
});
