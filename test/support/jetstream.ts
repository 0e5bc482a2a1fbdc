import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { onTestFinished } from 'vitest';
import type { Names } from '@offsetsync/contracts';
import { Heartbeat, type ServiceRole } from '@offsetsync/contracts';

/** A NATS connection closed when the current test finishes. */
export async function natsConnection(url: string): Promise<NatsConnection> {
  const nc = await connect({ servers: url });
  onTestFinished(() => nc.close());
  return nc;
}

/** The last message on `subject` in `stream`, or undefined when there is none. */
export async function lastOnSubject(
  jsm: JetStreamManager,
  stream: string,
  subject: string,
): Promise<{ data: Uint8Array; headers: Map<string, string>; seq: number } | undefined> {
  try {
    const message = await jsm.streams.getMessage(stream, { last_by_subj: subject });
    const headers = new Map<string, string>();
    for (const key of message.header?.keys() ?? []) headers.set(key, message.header.get(key));
    return { data: message.data, headers, seq: message.seq };
  } catch (error: unknown) {
    if ((error as { code?: string }).code === '404' || /no message found/i.test(String(error)))
      return undefined;
    throw error;
  }
}

/** Every subject currently holding a message in `stream` under `filter`, with its message count. */
export async function subjectsIn(
  jsm: JetStreamManager,
  stream: string,
  filter: string,
): Promise<Record<string, number>> {
  const info = await jsm.streams.info(stream, { subjects_filter: filter });
  return info.state.subjects ?? {};
}

/** The latest heartbeat of every instance of `role` under the prefix of `names`. */
export async function heartbeats(
  jsm: JetStreamManager,
  names: Names,
  role: ServiceRole,
): Promise<Heartbeat[]> {
  const stream = names.stream('heartbeats');
  const subjects = Object.keys(await subjectsIn(jsm, stream, names.heartbeatFilter()));
  const beats: Heartbeat[] = [];
  for (const subject of subjects) {
    const message = await lastOnSubject(jsm, stream, subject);
    if (message === undefined) continue;
    const beat = Heartbeat.decode(message.data);
    if (beat.role === role) beats.push(beat);
  }
  return beats;
}
