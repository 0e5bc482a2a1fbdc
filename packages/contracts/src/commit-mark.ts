// offsetsync marks the commits it writes on a target cluster by prefixing the commit metadata. The
// mark tells two things apart: commits offsetsync made (which a collector on that cluster must not
// send back: no echo loops in A -> B -> A) and commits the application made itself (which offsetsync
// must not overwrite with older source state). The application's own metadata, if any, follows the mark.
//
//   osync1|<origin cluster alias>|<offsets-topic partition>|<offsets-topic offset>|<original metadata>

const PREFIX = 'osync1';
const SEPARATOR = '|';

/** What an offsetsync commit carries: where the position came from and which source commit it was. */
export interface CommitMark {
  /** Alias of the source cluster the committed position was translated from. */
  origin: string;
  /** The source commit's version: its position in the source's `__consumer_offsets`. */
  offsetsPartition: number;
  offsetsOffset: number;
}

/** Metadata for an offsetsync commit: the mark, then the application's metadata unchanged. */
export function formatCommitMetadata(mark: CommitMark, originalMetadata: string): string {
  if (mark.origin.includes(SEPARATOR))
    throw new RangeError(`cluster alias '${mark.origin}' contains '${SEPARATOR}'`);
  return [PREFIX, mark.origin, mark.offsetsPartition, mark.offsetsOffset, originalMetadata].join(SEPARATOR);
}

/**
 * Reads the mark from commit metadata. Returns undefined for metadata without a well-formed mark: such a
 * commit is the application's own.
 */
export function parseCommitMetadata(
  metadata: string | null | undefined,
): { mark: CommitMark; originalMetadata: string } | undefined {
  if (metadata === null || metadata === undefined || !metadata.startsWith(`${PREFIX}${SEPARATOR}`))
    return undefined;
  const parts = metadata.split(SEPARATOR);
  if (parts.length < 5) return undefined;
  const [, origin, partitionText, offsetText] = parts;
  const offsetsPartition = Number(partitionText);
  const offsetsOffset = Number(offsetText);
  if (!origin || !Number.isSafeInteger(offsetsPartition) || !Number.isSafeInteger(offsetsOffset))
    return undefined;
  if (offsetsPartition < 0 || offsetsOffset < 0) return undefined;
  return {
    mark: { origin, offsetsPartition, offsetsOffset },
    // The application's metadata may itself contain the separator: keep everything after the fourth one.
    originalMetadata: parts.slice(4).join(SEPARATOR),
  };
}
