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

/** The keys (subjects) whose last translation was pending: the pending-translations gauge. */
export class PendingTranslations {
  private readonly keys = new Set<string>();

  /** How many keys wait for their record on the target. */
  get size(): number {
    return this.keys.size;
  }

  /** Notes the settlement of the key's latest translation. */
  settled(key: string, settlement: Settlement): void {
    if (settlement.kind === 'nak') this.keys.add(key);
    else this.keys.delete(key);
  }
}
