// Page tokens of ListGroups: where the previous page ended and which filters it was listed with, as an
// opaque base64url string. Pure; a token that does not decode, or belongs to other filters, is rejected.
import { createHash } from 'node:crypto';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';

/** The last group of a page, in listing order (source, target, group). */
export interface PagePosition {
  source: string;
  target: string;
  group: string;
}

/** The filters of one listing, which must not change between its pages. */
export interface PageFilters {
  sourceCluster: string;
  targetCluster: string;
  groupPrefix: string;
  state: number;
}

function filterDigest(filters: PageFilters): string {
  return createHash('sha256')
    .update(
      JSON.stringify([filters.sourceCluster, filters.targetCluster, filters.groupPrefix, filters.state]),
    )
    .digest('base64url')
    .slice(0, 16);
}

export function encodePageToken(after: PagePosition, filters: PageFilters): string {
  return Buffer.from(
    JSON.stringify({ v: 1, f: filterDigest(filters), a: [after.source, after.target, after.group] }),
  ).toString('base64url');
}

/** The position a token continues after. Throws an OffsetSyncError (DECODE_ERROR) for a bad token. */
export function decodePageToken(token: string, filters: PageFilters): PagePosition {
  const invalid = (why: string) =>
    new OffsetSyncError(`invalid page_token: ${why}`, { code: ErrorCodes.DECODE_ERROR, retryable: false });
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid('not a token this server issued');
  }
  if (typeof parsed !== 'object' || parsed === null) throw invalid('not a token this server issued');
  const { v, f, a } = parsed as { v?: unknown; f?: unknown; a?: unknown };
  if (
    v !== 1 ||
    typeof f !== 'string' ||
    !Array.isArray(a) ||
    a.length !== 3 ||
    !a.every((x): x is string => typeof x === 'string')
  ) {
    throw invalid('not a token this server issued');
  }
  if (f !== filterDigest(filters)) throw invalid('the filters changed since the token was issued');
  return { source: a[0]!, target: a[1]!, group: a[2]! };
}

/** Orders listing positions: source, then target, then group (code unit order, stable across restarts). */
export function comparePositions(a: PagePosition, b: PagePosition): number {
  const order = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return order(a.source, b.source) || order(a.target, b.target) || order(a.group, b.group);
}
