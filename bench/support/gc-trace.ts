// Reads the lines Node.js writes with `--trace-gc` into what the health benchmark reports: how big the V8
// heap was after the last full collection (the live JavaScript objects, against the process's RSS) and
// how much main-thread time collections took. Pure: the service's log text in, figures out.

/** One collection as `--trace-gc` prints it. */
export interface GcEvent {
  /** Milliseconds since the process started. */
  atMs: number;
  /** `Scavenge`, `Mark-Compact`, `Minor Mark-Compact`, ... (V8's words). */
  kind: string;
  /** Heap in use before and after, in MB. */
  beforeMb: number;
  afterMb: number;
  /** Heap reserved after, in MB. */
  committedMb: number;
  /** Main-thread time: the pause, plus incremental marking steps that led to it. */
  mainThreadMs: number;
}

// [pid:0x...]   697 ms: Mark-Compact 75.8 (96.5) -> 61.2 (96.1) MB, 30.55 / 0.00 ms  (+ 22.7 ms in 86 steps ...
const LINE =
  /^\[\d+:0x[0-9a-f]+\]\s+(\d+) ms: ([A-Za-z -]+?)(?: \([a-z ]+\))? ([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB, ([\d.]+) \/ [\d.]+ ms(?:\s+\(\+ ([\d.]+) ms in \d+ steps)?/;

/** The collections in `log`, in order; other lines (the service's JSON log) are passed over. */
export function parseGcTrace(log: string): GcEvent[] {
  const events: GcEvent[] = [];
  for (const line of log.split('\n')) {
    const m = LINE.exec(line);
    if (m === null) continue;
    events.push({
      atMs: Number(m[1]),
      kind: m[2]!,
      beforeMb: Number(m[3]),
      afterMb: Number(m[5]),
      committedMb: Number(m[6]),
      mainThreadMs: Number(m[7]) + Number(m[8] ?? 0),
    });
  }
  return events;
}

/** A full collection: it marks the whole heap, so its `afterMb` is the live heap. */
function isFull(event: GcEvent): boolean {
  return event.kind === 'Mark-Compact' || event.kind === 'Mark-sweep';
}

/** What the benchmark reports of a stretch of collections. */
export interface GcSummary {
  collections: number;
  full_collections: number;
  /** Main-thread time of every collection, in seconds. */
  main_thread_s: number;
  /** Heap after the last full collection (MB) and when it ran (ms since the process started); null if none. */
  heap_after_last_full_mb: number | null;
  /** The heap V8 kept reserved after that collection (what RSS follows), MB; null if none. */
  heap_reserved_after_last_full_mb: number | null;
  last_full_at_ms: number | null;
  /** The largest heap in use seen before any collection, in MB. */
  heap_peak_mb: number;
}

/** Summary of `events` (all, or those of one phase). */
export function summarizeGc(events: readonly GcEvent[]): GcSummary {
  let mainThreadMs = 0;
  let peak = 0;
  let lastFull: GcEvent | undefined;
  let full = 0;
  for (const event of events) {
    mainThreadMs += event.mainThreadMs;
    peak = Math.max(peak, event.beforeMb);
    if (isFull(event)) {
      full += 1;
      lastFull = event;
    }
  }
  return {
    collections: events.length,
    full_collections: full,
    main_thread_s: Math.round(mainThreadMs) / 1000,
    heap_after_last_full_mb: lastFull?.afterMb ?? null,
    heap_reserved_after_last_full_mb: lastFull?.committedMb ?? null,
    last_full_at_ms: lastFull?.atMs ?? null,
    heap_peak_mb: peak,
  };
}
