// The decision step of the translation pipeline: what each located source commit becomes on the target
// (translation-plan.ts decides), with the patience settings applied to this delivery. Pure.
import type { OffsetCommitted } from '@offsetsync/contracts';
import { decide, type Translation } from '../translation-plan.js';
import type { AnchorLocations } from './locate.js';

/** Deliveries of an event whose search window ran out before its inexact fallback is published. */
export const EXHAUSTED_ATTEMPTS_BEFORE_FALLBACK = 4;

/** What the decision needs to know of this delivery. */
export interface DeliveryFacts {
  /** Now (epoch ms). */
  nowMs: number;
  /** JetStream's count of deliveries of the event (1 the first time). */
  deliveryCount: number;
  /** After how long a record that has not arrived is given up on (0: never); translator.pendingFallbackAfterMs. */
  pendingFallbackAfterMs: number;
}

/** The translation of one located commit. Pure. */
export function buildTranslation(
  event: OffsetCommitted,
  located: AnchorLocations,
  delivery: DeliveryFacts,
): Translation {
  const waited = delivery.nowMs - event.observedAtMs;
  const fallbackAfter = delivery.pendingFallbackAfterMs;
  return decide(event, located.location, located.bounds, {
    fallBack: fallbackAfter > 0 && waited >= fallbackAfter,
    // A replicator still catching up makes a search miss records that a moment later are there to be
    // found: an exhausted window is searched again a few times before it falls back.
    exhaustedFallsBack: delivery.deliveryCount >= EXHAUSTED_ATTEMPTS_BEFORE_FALLBACK,
  });
}
