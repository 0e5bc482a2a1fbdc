// The last step of the translation pipeline: once its translation is published, a source commit is done
// (acknowledged) unless the translation is pending. A pending one is handed back to JetStream with a
// growing delay (nak), until its record arrives on the target or a newer commit of the key supersedes it.
import { TranslationOutcome } from '@offsetsync/contracts';
import type { Translation } from '../translation-plan.js';

/** translator.pendingRetryMinMs and translator.pendingRetryMaxMs. */
export interface PendingRetry {
  minMs: number;
  maxMs: number;
}

/** What becomes of a source commit whose translation is published. */
export type Settlement = { kind: 'ack' } | { kind: 'nak'; delayMs: number };

/** Exponential backoff from `minMs` to `maxMs` by delivery attempt (1 the first time). Pure. */
export function pendingRetryDelayMs(attempt: number, retry: PendingRetry): number {
  return Math.min(retry.maxMs, retry.minMs * 2 ** Math.max(0, Math.min(20, attempt - 1)));
}

/** The settlement of a source commit on its `attempt`-th delivery. Pure. */
export function settlementOf(translation: Translation, attempt: number, retry: PendingRetry): Settlement {
  return translation.outcome === TranslationOutcome.TRANSLATION_OUTCOME_PENDING
    ? { kind: 'nak', delayMs: pendingRetryDelayMs(attempt, retry) }
    : { kind: 'ack' };
}

/**
 * A key handed back is forgotten when it is not seen again this long after its delay ran out: JetStream
 * gave its redelivery to another instance (which settles it there), or a newer commit of the key went
 * elsewhere. Above the consumer's ack wait (30 s), so a redelivery that comes late is still in time.
 */
const FORGET_PENDING_AFTER_MS = 60_000;

/**
 * The keys (subjects) whose last translation here was pending: the pending-translations gauge. A key is
 * removed when its commit is acknowledged here, and otherwise forgotten once it was not handed back again
 * in time (see {@link FORGET_PENDING_AFTER_MS}): only this instance's own waiting keys are counted, and
 * the set does not grow with keys other instances took over.
 */
export class PendingTranslations {
  /** Each waiting key with the time after which it is forgotten unless handed back again. */
  private readonly keys = new Map<string, number>();
  private nextPruneMs = 0;

  constructor(
    private readonly clock: () => number = Date.now,
    private readonly forgetAfterMs = FORGET_PENDING_AFTER_MS,
  ) {}

  /** How many keys wait for their record on the target. */
  get size(): number {
    this.prune(this.clock());
    return this.keys.size;
  }

  /** Notes the settlement of the key's latest translation. */
  settled(key: string, settlement: Settlement): void {
    const now = this.clock();
    if (settlement.kind === 'nak') this.keys.set(key, now + settlement.delayMs + this.forgetAfterMs);
    else this.keys.delete(key);
    // Pruned about once a second: bounded without a sweep on every settlement.
    if (now >= this.nextPruneMs) this.prune(now);
  }

  private prune(now: number): void {
    this.nextPruneMs = now + 1_000;
    for (const [key, forgetAtMs] of this.keys) if (forgetAtMs < now) this.keys.delete(key);
  }
}
