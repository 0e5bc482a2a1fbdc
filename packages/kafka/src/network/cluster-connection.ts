// One kafkajs Cluster the adapter sends through: connected once (a failed attempt may be repeated), its
// brokers' Metadata kept lenient whenever kafkajs may have added brokers, and calls that any broker can
// answer.
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { toOffsetSyncError } from '../kafka-errors.js';
import type { InternalBroker, InternalCluster } from '../protocol/kafkajs-internals.js';
import { makeBrokerMetadataLenient, ResponseDecodeError } from './send-request.js';

/** The error of every call after the adapter was disconnected. */
export function closedError(): OffsetSyncError {
  return new OffsetSyncError('the Kafka adapter was disconnected', { code: ErrorCodes.LIFECYCLE });
}

/** A kafkajs `Cluster` and how the adapter connects it and reaches its brokers. */
export class ClusterConnection {
  private connecting: Promise<void> | undefined;

  constructor(private readonly cluster: InternalCluster) {}

  /**
   * Connects to the cluster and reads its brokers. Every caller gets the same promise; a failed attempt
   * (rejected as an OffsetSyncError carrying `details`) is forgotten, so the next call tries again.
   */
  connect(details?: Record<string, unknown>): Promise<void> {
    this.connecting ??= (async () => {
      try {
        await this.cluster.connect();
        await this.refreshBrokers();
      } catch (error: unknown) {
        this.connecting = undefined;
        throw toOffsetSyncError(error, { operation: 'connect', details });
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
    this.makeLenient();
    await this.cluster.refreshMetadata();
    this.makeLenient();
  }

  /** The node ids of the brokers kafkajs knows. */
  nodeIds(): string[] {
    return this.cluster.getNodeIds();
  }

  /** The connected broker of `nodeId` (kafkajs reads the broker list again when it does not know it). */
  findBroker(nodeId: number | string): Promise<InternalBroker> {
    return this.cluster.findBroker({ nodeId });
  }

  /** The group's coordinator (kafkajs' FindCoordinator, with kafkajs' retries) and its node id if known. */
  async findGroupCoordinator(groupId: string): Promise<{ broker: InternalBroker; nodeId?: string }> {
    const broker = await this.cluster.findGroupCoordinator({ groupId });
    const nodeId = Object.entries(this.cluster.brokerPool.brokers).find(([, b]) => b === broker)?.[0];
    return nodeId === undefined ? { broker } : { broker, nodeId };
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
}
