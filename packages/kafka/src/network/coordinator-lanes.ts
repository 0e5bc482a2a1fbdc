// Group requests (OffsetCommit, OffsetFetch, DescribeGroups) go to the group's coordinator, over one of
// `groupConnections` clusters ("lanes"), a group always on the same lane: a broker handles one request of
// a connection at a time, so lanes let commits of different groups proceed in parallel. The coordinator of
// each group is remembered until it moves.
import { ErrorCodes, type OffsetSyncError } from '@offsetsync/contracts';
import { toOffsetSyncError } from '../kafka-errors.js';
import { brokerError } from '../protocol/broker-errors.js';
import type { InternalBroker } from '../protocol/kafkajs-internals.js';
import type { ClusterConnection } from './cluster-connection.js';
import { coordinatorMoved } from './retry-policy.js';

/** What one attempt of a group call saw: its result, and the group-level error code (0: none). */
export interface CoordinatorAttempt<T> {
  result: T;
  code: number;
}

/** Which of `lanes` connections carries a group's requests: a hash (FNV-1a) of the group id. */
export function laneOf(groupId: string, lanes: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < groupId.length; i++) {
    hash ^= groupId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % lanes;
}

/** The lanes of group requests and the coordinators found on them. */
export class CoordinatorLanes {
  /** Node id of each group's coordinator, as last found; forgotten when the coordinator moved or failed. */
  private readonly coordinators = new Map<string, string>();

  /** @param lanes the connections of the lanes; the first is the adapter's own, connected before any call. */
  constructor(readonly lanes: readonly ClusterConnection[]) {}

  /**
   * Runs `call` against the group's coordinator. `call` reports the group-level error code it saw; when
   * that says the coordinator moved (or the coordinator could not be reached), the coordinator is looked
   * up again and `call` runs once more (`final` tells it which attempt it is). Other non-zero codes
   * reject.
   */
  async withCoordinator<T>(
    groupId: string,
    operation: string,
    call: (broker: InternalBroker, final: boolean) => Promise<CoordinatorAttempt<T>>,
  ): Promise<T> {
    const lane = await this.groupLane(groupId);
    for (let attempt = 0; ; attempt += 1) {
      const final = attempt === 1;
      let outcome: CoordinatorAttempt<T>;
      try {
        const broker = await this.coordinator(lane, groupId, operation);
        outcome = await call(broker, final);
      } catch (error: unknown) {
        this.coordinators.delete(groupId);
        const mapped: OffsetSyncError = toOffsetSyncError(error, { operation, details: { groupId } });
        if (final || mapped.code !== ErrorCodes.KAFKA_UNREACHABLE) throw mapped;
        continue;
      }
      if (outcome.code === 0) return outcome.result;
      this.coordinators.delete(groupId);
      if (coordinatorMoved(outcome.code) && !final) continue;
      throw brokerError(outcome.code, operation, { groupId });
    }
  }

  /** The connected lane whose connections carry the group's requests (always the same for a group). */
  private async groupLane(groupId: string): Promise<ClusterConnection> {
    const lane = this.lanes[laneOf(groupId, this.lanes.length)]!;
    if (lane === this.lanes[0]) return lane;
    await lane.connect({ groupId });
    lane.makeLenient();
    return lane;
  }

  /** The group's coordinator on `lane`: the remembered node when there is one, else FindCoordinator. */
  private async coordinator(
    lane: ClusterConnection,
    groupId: string,
    operation: string,
  ): Promise<InternalBroker> {
    const known = this.coordinators.get(groupId);
    if (known !== undefined) return lane.findBroker(known);
    const { broker, nodeId } = await lane.findGroupCoordinator(groupId, operation);
    if (nodeId !== undefined) this.coordinators.set(groupId, nodeId);
    return broker;
  }
}
