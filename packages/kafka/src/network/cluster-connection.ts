// One kafkajs Cluster the adapter sends through: connected once (a failed attempt may be repeated), its
// brokers' Metadata kept lenient whenever kafkajs may have added brokers, and calls that any broker can
// answer. Once the adapter began to disconnect (its socket ledger is closed), every way to a broker here
// rejects with LIFECYCLE before kafkajs could try to open a socket.
import { ErrorCodes, isOffsetSyncError, OffsetSyncError } from '@offsetsync/contracts';
import { toOffsetSyncError, type KafkaErrorContext } from '../kafka-errors.js';
import type { InternalBroker, InternalCluster } from '../protocol/kafkajs-internals.js';
import { brokerError } from '../protocol/broker-errors.js';
import { makeBrokerMetadataLenient, ResponseDecodeError, sendRequest } from './send-request.js';
import type { SocketLedger } from './socket-ledger.js';

/** Kafka's error code of a request refused for a missing group ACL. */
const GROUP_AUTHORIZATION_FAILED = 30;

/** A kafkajs `Cluster` and how the adapter connects it and reaches its brokers. */
export class ClusterConnection {
  private connecting: Promise<void> | undefined;

  /** @param sockets the ledger of the sockets `cluster` opens (shared by the adapter's clusters) */
  constructor(
    private readonly cluster: InternalCluster,
    private readonly sockets: SocketLedger,
  ) {}

  /**
   * Connects to the cluster and reads its brokers. Every caller gets the same promise; a failed attempt
   * (rejected as an OffsetSyncError carrying `details`) is forgotten, so the next call tries again. An
   * attempt the adapter's disconnect overtook rejects with LIFECYCLE.
   */
  connect(details?: Record<string, unknown>): Promise<void> {
    this.connecting ??= (async () => {
      try {
        this.sockets.assertOpen();
        await this.cluster.connect();
        await this.refreshBrokers();
        this.sockets.assertOpen();
      } catch (error: unknown) {
        this.connecting = undefined;
        throw this.failure(error, { operation: 'connect', details });
      }
    })();
    return this.connecting;
  }

  /** Resolves once a connect in progress has settled, however it ended. */
  async settled(): Promise<void> {
    try {
      await this.connecting;
    } catch {
      // A connect that failed left nothing open beyond what disconnect() closes.
    }
  }

  /** Closes every connection of the cluster. */
  disconnect(): Promise<void> {
    return this.cluster.disconnect();
  }

  /** Makes the Metadata call of brokers kafkajs added since the last call lenient (see send-request.ts). */
  makeLenient(): void {
    makeBrokerMetadataLenient(this.cluster.brokerPool);
  }

  /** Lets kafkajs read the broker list (host and port of every node id) again. */
  async refreshBrokers(): Promise<void> {
    this.sockets.assertOpen();
    this.makeLenient();
    try {
      await this.cluster.refreshMetadata();
    } catch (error: unknown) {
      throw this.failure(error);
    }
    this.makeLenient();
  }

  /** The node ids of the brokers kafkajs knows. */
  nodeIds(): string[] {
    return this.cluster.getNodeIds();
  }

  /** The connected broker of `nodeId` (kafkajs reads the broker list again when it does not know it). */
  async findBroker(nodeId: number | string): Promise<InternalBroker> {
    this.sockets.assertOpen();
    try {
      return await this.cluster.findBroker({ nodeId });
    } catch (error: unknown) {
      throw this.failure(error);
    }
  }

  /**
   * The group's coordinator (kafkajs' FindCoordinator, with kafkajs' retries) and its node id if known.
   * A lookup the broker refused for a missing group ACL rejects with NOT_AUTHORIZED about the group, as
   * `operation` needs it (see {@link explainMissingCoordinator}).
   */
  async findGroupCoordinator(
    groupId: string,
    operation = 'findGroupCoordinator',
  ): Promise<{ broker: InternalBroker; nodeId?: string }> {
    this.sockets.assertOpen();
    let broker: InternalBroker;
    try {
      broker = await this.cluster.findGroupCoordinator({ groupId });
    } catch (error: unknown) {
      if (error instanceof Error && error.name === 'KafkaJSGroupCoordinatorNotFound' && !this.sockets.closed)
        await this.explainMissingCoordinator(groupId, operation);
      throw this.failure(error);
    }
    const nodeId = Object.entries(this.cluster.brokerPool.brokers).find(([, b]) => b === broker)?.[0];
    return nodeId === undefined ? { broker } : { broker, nodeId };
  }

  /**
   * kafkajs reports a FindCoordinator the broker refused (GROUP_AUTHORIZATION_FAILED) as "Failed to find
   * group coordinator", the broker's error dropped. A broker checks the group's ACL before whether it
   * coordinates the group, so a DescribeGroups of it to any broker tells: rejects with that refusal,
   * classified for `operation`; returns when the group is not refused (the original failure stands).
   */
  private async explainMissingCoordinator(groupId: string, operation: string): Promise<void> {
    const refused = (code: number | undefined) => code === GROUP_AUTHORIZATION_FAILED;
    let answer;
    try {
      const nodeId = this.nodeIds()[0];
      if (nodeId === undefined) return;
      answer = await sendRequest(await this.findBroker(nodeId), 'DescribeGroups', { groupIds: [groupId] });
    } catch (error: unknown) {
      // kafkajs' parser throws on a group's error code.
      if (refused((error as { code?: number }).code))
        throw brokerError(GROUP_AUTHORIZATION_FAILED, operation, { groupId });
      return;
    }
    if (refused(answer.groups[0]?.errorCode))
      throw brokerError(GROUP_AUTHORIZATION_FAILED, operation, { groupId });
  }

  /**
   * Runs `call` against a connected broker, trying each known broker before giving up; when all failed,
   * reads the broker list again and tries each once more. A response that cannot be decoded is not
   * another broker's business: it rejects at once.
   */
  async withAnyBroker<T>(operation: string, call: (broker: InternalBroker) => Promise<T>): Promise<T> {
    let lastError: unknown = new OffsetSyncError('no broker known', { code: ErrorCodes.KAFKA_UNREACHABLE });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      for (const nodeId of this.nodeIds()) {
        try {
          return await call(await this.findBroker(nodeId));
        } catch (error: unknown) {
          if (error instanceof ResponseDecodeError) throw toOffsetSyncError(error, { operation });
          // Once disconnecting, no other broker will do.
          if (this.sockets.closed) throw this.failure(error);
          lastError = error;
        }
      }
      if (attempt === 0) {
        try {
          await this.refreshBrokers();
        } catch (error: unknown) {
          lastError = error;
          break;
        }
      }
    }
    throw toOffsetSyncError(lastError, { operation });
  }

  /**
   * What a failure of kafkajs becomes: LIFECYCLE (the failure its cause) once the adapter began to
   * disconnect, since kafkajs then fails for want of a socket the ledger refused; else, with a `context`,
   * its OffsetSyncError, or else the failure unchanged.
   */
  private failure(error: unknown, context?: KafkaErrorContext): unknown {
    if (this.sockets.closed) {
      return isOffsetSyncError(error) && error.code === ErrorCodes.LIFECYCLE
        ? error
        : this.sockets.refusal(error);
    }
    return context === undefined ? error : toOffsetSyncError(error, context);
  }
}
