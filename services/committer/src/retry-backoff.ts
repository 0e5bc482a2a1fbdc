// How long an event waits before JetStream hands it out again after a transient failure. Pure.

export interface BackoffSettings {
  minMs: number;
  maxMs: number;
}

/**
 * Doubling backoff by delivery attempt: `minMs` after the first delivery, then twice as long after each
 * further one, never more than `maxMs`. `deliveryCount` is JetStream's count of deliveries (1 the first
 * time).
 */
export function retryDelayMs(deliveryCount: number, settings: BackoffSettings): number {
  const attempt = Math.max(1, Math.floor(deliveryCount));
  // 2^30 already exceeds any sensible cap; stop before the number grows past what is meaningful.
  const factor = 2 ** Math.min(attempt - 1, 30);
  return Math.min(settings.maxMs, settings.minMs * factor);
}
