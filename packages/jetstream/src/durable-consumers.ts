// The durable consumers of one link, one per role: the service fetches from it, `offsetsync provision`
// creates it, and the NATS permissions name it. Their settings live here so that a consumer created by
// provisioning is the one the service expects.
import type { Names } from '@offsetsync/contracts';
import type { DurableConsumerSpec } from './provisioning.js';

/** Translations held by translator instances of one link and not acknowledged yet. */
const TRANSLATOR_MAX_ACK_PENDING = 20_000;
/** Redelivery of a committed event a translator instance took and did not settle (it died). */
const TRANSLATOR_ACK_WAIT_MS = 30_000;
/** Translations held by committer instances of one link and not acknowledged yet. */
const COMMITTER_MAX_ACK_PENDING = 10_000;

/** The translator's durable consumer of one link on the committed stream. */
export function translatorDurable(source: string, target: string): string {
  return `translator-${source}-${target}`;
}

/**
 * What a committer does with a link's translations: `commit` them on the target, or only `observe`
 * (shadow mode, config `links[].mode`).
 */
export type CommitterMode = 'commit' | 'observe';

/**
 * The committer's durable consumer of one link on the translated stream, in `mode`. An observing
 * committer reads with a consumer of its own: the committing consumer's position stays where committing
 * stopped (or is created when committing starts), so a committer switched to `commit` reads every key
 * whose translation it has not committed, whatever was observed meanwhile: the stream's current state.
 */
export function committerDurable(source: string, target: string, mode: CommitterMode = 'commit'): string {
  return mode === 'commit' ? `committer-${source}-${target}` : `committer-${source}-${target}-observe`;
}

/** Every durable consumer a committer of one link may use: one per mode. */
export function committerDurables(source: string, target: string): string[] {
  return [committerDurable(source, target, 'commit'), committerDurable(source, target, 'observe')];
}

/** What the translator of `source -> target` reads: the source's committed events. */
export function translatorConsumerSpec(names: Names, source: string, target: string): DurableConsumerSpec {
  return {
    stream: names.stream('committed'),
    durable: translatorDurable(source, target),
    filterSubject: names.committedFilter(source),
    ackWaitMs: TRANSLATOR_ACK_WAIT_MS,
    maxAckPending: TRANSLATOR_MAX_ACK_PENDING,
  };
}

/** What the committer of `source -> target` reads in `mode`: the link's translations (`committer.ackWaitMs`). */
export function committerConsumerSpec(
  names: Names,
  source: string,
  target: string,
  ackWaitMs: number,
  mode: CommitterMode = 'commit',
): DurableConsumerSpec {
  return {
    stream: names.stream('translated'),
    durable: committerDurable(source, target, mode),
    filterSubject: names.translatedFilter(source, target),
    ackWaitMs,
    maxAckPending: COMMITTER_MAX_ACK_PENDING,
  };
}
