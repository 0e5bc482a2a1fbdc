// How long to wait before the next try after failures in a row: the one doubling backoff of every
// service (an event JetStream hands out again, a stream followed again, a Kafka consumer restarted). Pure.

export interface BackoffSettings {
  minMs: number;
  maxMs: number;
}

/**
 * `minMs` after the first failure in a row (`attempt` 1, or less), then twice as long after each further
 * one, never more than `maxMs`. A JetStream delivery count is such an attempt number.
 */
export function doublingBackoffMs(attempt: number, settings: BackoffSettings): number {
  attempt = Math.max(1, Math.floor(attempt));
  // 2^30 already exceeds any sensible cap; stop before the number grows past what is meaningful.
  const factor = 2 ** Math.min(attempt - 1, 30);
  return Math.min(settings.maxMs, settings.minMs * factor);
}
