// When the application made its own commit on the target, if anything saw it: in a bidirectional setup a
// collector reads the target cluster too and publishes the target's commits, with their broker times,
// on the committed stream under the target's alias.
import { decodeEvent, type GroupPartition, type Names } from '@offsetsync/contracts';
import type { JetStreamManager } from 'nats';

/**
 * The broker time of the target's own commit of `offset` for `key`, from the last OffsetCommitted event
 * on the target's subject; undefined when there is none or it is about another offset.
 */
export async function targetCommitTime(
  jsm: JetStreamManager,
  names: Names,
  target: string,
  key: GroupPartition,
  offset: number,
): Promise<number | undefined> {
  let message;
  try {
    message = await jsm.streams.getMessage(names.stream('committed'), {
      last_by_subj: names.committed(target, key),
    });
  } catch {
    // No collector reads the target, or it saw no commit of this key.
    return undefined;
  }
  // The last message of the subject may be a deletion; then nothing is known of the commit.
  const decoded = decodeEvent(
    { headers: message.header, data: message.data },
    { accept: ['OffsetCommitted'] },
  );
  if (!decoded.ok) return undefined;
  return decoded.event.committedOffset === offset ? decoded.event.commitTimestampMs : undefined;
}
