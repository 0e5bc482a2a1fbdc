// The golden wire fixtures (fixtures/wire-golden.json): every event type, message id, subject, header set
// and commit mark as the build of 4b23702 made them, before the restructure of issue 13. The wire
// compatibility test and each service's own encoding tests read them through here, so a rolling upgrade
// keeps deduplicating: today's code must decode them and encode them again byte-identical.
import { readFileSync } from 'node:fs';
import { headers as natsHeaders, type MsgHdrs } from 'nats';
import type { CommitMark, EventType } from '@offsetsync/contracts';

/** One event as the old build published it; `payload` is the protobuf bytes in base64. */
export interface GoldenEvent {
  type: EventType;
  subject: string;
  /** `Nats-Msg-Id`; null for heartbeats, which carry none. */
  msgId: string | null;
  headers: Record<string, string>;
  payload: string;
}

/** One commit mark as the old build wrote it into commit metadata on a target. */
export interface GoldenCommitMark {
  mark: CommitMark;
  original: string;
  metadata: string;
}

interface WireGolden {
  events: GoldenEvent[];
  commitMarks: GoldenCommitMark[];
}

let loaded: WireGolden | undefined;

function wireGolden(): WireGolden {
  loaded ??= JSON.parse(
    readFileSync(new URL('../fixtures/wire-golden.json', import.meta.url), 'utf8'),
  ) as WireGolden;
  return loaded;
}

/** The golden events, of the given types only when types are named. */
export function goldenEvents(...types: EventType[]): GoldenEvent[] {
  const events = wireGolden().events;
  return types.length === 0 ? events : events.filter((event) => types.includes(event.type));
}

/** The golden commit marks. */
export function goldenCommitMarks(): GoldenCommitMark[] {
  return wireGolden().commitMarks;
}

/** A golden event as JetStream would deliver it: its headers and payload bytes. */
export function goldenMessage(event: GoldenEvent): { headers: MsgHdrs; data: Uint8Array } {
  const headers = natsHeaders();
  for (const [name, value] of Object.entries(event.headers)) headers.set(name, value);
  return { headers, data: Buffer.from(event.payload, 'base64') };
}
