// A fake Kafka cluster for unit tests of the adapter's routing and retry core. Its brokers speak Kafka's
// wire protocol over real TCP on 127.0.0.1, on ports the OS picks: size-prefixed frames, request headers
// v1/v2, and for each API the one version the fake advertises through ApiVersions (non-flexible versions
// kafkajs 2.2.4 supports, so kafkajs' own request encoders and response decoders are what the fake is
// tested against). Like a real cluster, a broker answers partition requests only for the partitions it
// leads (NOT_LEADER_OR_FOLLOWER otherwise) and group requests only for the groups it coordinates
// (NOT_COORDINATOR otherwise), so a test moves a leader or a coordinator by changing the shared state;
// error codes and dropped connections can be injected into the next matching requests. Every request is
// logged for assertions. Test code only: not exported from the package, not part of its build.
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { KafkaWriter, type KafkaReader } from '../binary.js';
import { BrokerErrorCodes } from '../kafka-errors.js';
import { FrameReader, parseRequestHeader, readArray, responseFrame, writeArray } from './wire-frames.js';

/** The APIs the fake answers, by name. */
export const FakeApis = {
  Fetch: 1,
  ListOffsets: 2,
  Metadata: 3,
  OffsetCommit: 8,
  OffsetFetch: 9,
  FindCoordinator: 10,
  DescribeGroups: 15,
  ListGroups: 16,
  ApiVersions: 18,
  ConsumerGroupDescribe: 69,
} as const;

/** One of the APIs the fake answers. */
export type FakeApiName = keyof typeof FakeApis;

/**
 * The versions the fake speaks (one per API; ApiVersions 0-2, which kafkajs probes from the top). ListGroups
 * and ConsumerGroupDescribe are the flexible versions the adapter encodes itself; a cluster started with
 * `kip848: false` offers neither, as a broker before Kafka 3.7 would not.
 */
const VERSIONS: Readonly<Record<number, { min: number; max: number }>> = {
  [FakeApis.Fetch]: { min: 4, max: 4 },
  [FakeApis.ListOffsets]: { min: 2, max: 2 },
  [FakeApis.Metadata]: { min: 4, max: 4 },
  [FakeApis.OffsetCommit]: { min: 3, max: 3 },
  [FakeApis.OffsetFetch]: { min: 3, max: 3 },
  [FakeApis.FindCoordinator]: { min: 1, max: 1 },
  [FakeApis.DescribeGroups]: { min: 1, max: 1 },
  [FakeApis.ListGroups]: { min: 5, max: 5 },
  [FakeApis.ApiVersions]: { min: 0, max: 2 },
  [FakeApis.ConsumerGroupDescribe]: { min: 0, max: 0 },
};

const KIP_848_APIS: ReadonlySet<number> = new Set([FakeApis.ListGroups, FakeApis.ConsumerGroupDescribe]);

/** The first flexible version of each API: from there on requests carry header v2 (tagged fields). */
const FIRST_FLEXIBLE: Readonly<Record<number, number>> = {
  [FakeApis.Fetch]: 12,
  [FakeApis.ListOffsets]: 6,
  [FakeApis.Metadata]: 9,
  [FakeApis.OffsetCommit]: 8,
  [FakeApis.OffsetFetch]: 6,
  [FakeApis.FindCoordinator]: 3,
  [FakeApis.DescribeGroups]: 5,
  [FakeApis.ListGroups]: 3,
  [FakeApis.ApiVersions]: 3,
  [FakeApis.ConsumerGroupDescribe]: 0,
};

/** Whether `apiVersion` of `apiKey` is a flexible version. */
function isFlexible(apiKey: number, apiVersion: number): boolean {
  const first = FIRST_FLEXIBLE[apiKey];
  return first !== undefined && apiVersion >= first;
}

/** The request header version of a request: 2 for flexible versions, 1 otherwise. */
export function requestHeaderVersion(apiKey: number, apiVersion: number): 1 | 2 {
  return isFlexible(apiKey, apiVersion) ? 2 : 1;
}

/** A failure injected into the next requests that match. */
export interface Fault {
  api: FakeApiName;
  /** Only requests to this broker. Default: any broker. */
  nodeId?: number;
  /**
   * The error code to answer with (for every partition or group the request names, or as the top-level
   * code where the API has one), or `'drop'`: close the connection without answering.
   */
  error: number | 'drop';
  /** How many matching requests meet the fault. Default: 1; `Infinity` for all. */
  times?: number;
}

/** A request a broker received, in arrival order across the cluster. */
export interface FakeRequest {
  nodeId: number;
  api: FakeApiName;
  apiVersion: number;
  /** `performance.now()` when it arrived. */
  at: number;
  /** The first non-zero error code of the answer (0: none); `'drop'` when the connection was closed. */
  answered: number | 'drop';
}

interface PartitionState {
  leader: number;
  logStartOffset: number;
  highWatermark: number;
}

interface Committed {
  offset: number;
  metadata: string | null;
}

/** A live member of a fake group. */
export interface FakeMember {
  memberId: string;
  clientId: string;
  clientHost: string;
  /** Owned partitions (consumer-protocol groups only). */
  assignment?: { topic: string; partitions: number[] }[];
}

/** A group of the fake with members, or of a type other than classic. */
export interface FakeGroup {
  type: 'classic' | 'consumer' | 'share';
  members: FakeMember[];
}

/** What a handler answers: the response body and its most telling error code. */
interface Answer {
  body: Buffer;
  errorCode: number;
}

/** Options of {@link FakeKafkaCluster.createTopic}. */
export interface FakeTopicOptions {
  /** Default 1. */
  partitions?: number;
  /** Node id of every partition's leader. Default 0. */
  leader?: number;
  /** Default 0. */
  logStartOffset?: number;
  /** Default 0. */
  highWatermark?: number;
}

/** A fake cluster of brokers with node ids 0..n-1 that share one state. */
export class FakeKafkaCluster {
  /** Every request received, in arrival order. */
  readonly requests: FakeRequest[] = [];
  /** Requests the fake could not handle (an API or version it does not speak, a malformed frame). */
  readonly problems: string[] = [];

  private readonly topics = new Map<string, PartitionState[]>();
  private readonly coordinators = new Map<string, number>();
  /** Committed offsets by group, topic and partition. */
  private readonly committed = new Map<string, Map<string, Map<number, Committed>>>();
  private readonly faults: Required<Fault>[] = [];
  private readonly groups = new Map<string, FakeGroup>();

  private constructor(
    private readonly brokers: readonly FakeBroker[],
    private readonly versions: Readonly<Record<number, { min: number; max: number }>>,
  ) {}

  /**
   * Starts `brokers` brokers (default 2) on free ports of 127.0.0.1; with `kip848: false` they offer
   * neither ListGroups v5 nor ConsumerGroupDescribe.
   */
  static async start(options: { brokers?: number; kip848?: boolean } = {}): Promise<FakeKafkaCluster> {
    const nodes: FakeBroker[] = [];
    const versions =
      options.kip848 === false
        ? Object.fromEntries(Object.entries(VERSIONS).filter(([key]) => !KIP_848_APIS.has(Number(key))))
        : VERSIONS;
    const cluster = new FakeKafkaCluster(nodes, versions);
    for (let nodeId = 0; nodeId < (options.brokers ?? 2); nodeId++) {
      nodes.push(await FakeBroker.listen(nodeId, cluster));
    }
    return cluster;
  }

  /** `host:port` of broker 0, to bootstrap from. */
  get bootstrapServers(): string[] {
    return [`127.0.0.1:${this.broker(0).port}`];
  }

  /** How many connections broker `nodeId` has accepted so far. */
  connections(nodeId: number): number {
    return this.broker(nodeId).accepted;
  }

  /** How many connections the brokers hold open now (all brokers, or only `nodeId`), as the server sees them. */
  openConnections(nodeId?: number): number {
    const brokers = nodeId === undefined ? this.brokers : [this.broker(nodeId)];
    return brokers.reduce((sum, b) => sum + b.open, 0);
  }

  /** The requests received since `mark` (an earlier `requests.length`), as `api@node:answered` strings. */
  since(mark: number): string[] {
    return this.requests.slice(mark).map((r) => `${r.api}@${r.nodeId}:${r.answered}`);
  }

  createTopic(name: string, options: FakeTopicOptions = {}): void {
    this.topics.set(
      name,
      Array.from({ length: options.partitions ?? 1 }, () => ({
        leader: options.leader ?? 0,
        logStartOffset: options.logStartOffset ?? 0,
        highWatermark: options.highWatermark ?? 0,
      })),
    );
  }

  /** Makes `nodeId` the leader of the partition; the old leader refuses it from now on. */
  moveLeader(topic: string, partition: number, nodeId: number): void {
    const state = this.topics.get(topic)?.[partition];
    if (state === undefined) throw new Error(`no partition ${topic}-${partition}`);
    state.leader = nodeId;
  }

  /** Makes `nodeId` the coordinator of the group (default: node 0); the old one refuses it from now on. */
  moveCoordinator(groupId: string, nodeId: number): void {
    this.coordinators.set(groupId, nodeId);
  }

  /** Makes the group one of `group.type` with `group.members` (none: an empty group of that type). */
  setGroup(groupId: string, group: FakeGroup): void {
    this.groups.set(groupId, group);
  }

  /** The offsets committed for a group, as `topic-partition -> offset`. */
  committedOffsets(groupId: string): Record<string, number> {
    const offsets: Record<string, number> = {};
    for (const [topic, partitions] of this.committed.get(groupId) ?? []) {
      for (const [partition, c] of partitions) offsets[`${topic}-${partition}`] = c.offset;
    }
    return offsets;
  }

  /** Injects a failure into the next matching requests. */
  inject(fault: Fault): void {
    this.faults.push({ nodeId: -1, times: 1, ...fault });
  }

  /** Closes every broker and connection. */
  async close(): Promise<void> {
    await Promise.all(this.brokers.map((b) => b.close()));
  }

  /** @internal The answer of broker `nodeId` to one request frame, or `'drop'`. */
  handle(nodeId: number, frame: Buffer): Buffer | 'drop' {
    const header = parseRequestHeader(frame, requestHeaderVersion);
    const api = apiName(header.apiKey);
    const versions = this.versions[header.apiKey];
    if (api === undefined || versions === undefined) {
      throw new Error(`API key ${header.apiKey} is not spoken by the fake`);
    }
    if (header.apiVersion < versions.min || header.apiVersion > versions.max) {
      throw new Error(`${api} v${header.apiVersion} is not spoken by the fake`);
    }
    const entry: FakeRequest = {
      nodeId,
      api,
      apiVersion: header.apiVersion,
      at: performance.now(),
      answered: 0,
    };
    this.requests.push(entry);
    const fault = this.takeFault(api, nodeId);
    if (fault === 'drop') {
      entry.answered = 'drop';
      return 'drop';
    }
    const answer = this.answer(api, nodeId, header.apiVersion, header.body, fault);
    entry.answered = answer.errorCode;
    // ApiVersions answers with header v0 whatever its version, so a client can always read it.
    const responseHeader = api !== 'ApiVersions' && isFlexible(header.apiKey, header.apiVersion) ? 1 : 0;
    return responseFrame(header.correlationId, responseHeader, answer.body);
  }

  private broker(nodeId: number): FakeBroker {
    const broker = this.brokers[nodeId];
    if (broker === undefined) throw new Error(`no broker ${nodeId}`);
    return broker;
  }

  private takeFault(api: FakeApiName, nodeId: number): number | 'drop' | undefined {
    const index = this.faults.findIndex((f) => f.api === api && (f.nodeId === -1 || f.nodeId === nodeId));
    const fault = this.faults[index];
    if (fault === undefined) return undefined;
    fault.times -= 1;
    if (fault.times <= 0) this.faults.splice(index, 1);
    return fault.error;
  }

  private answer(
    api: FakeApiName,
    nodeId: number,
    version: number,
    body: KafkaReader,
    fault: number | undefined,
  ): Answer {
    switch (api) {
      case 'ApiVersions':
        return apiVersionsAnswer(version, this.versions);
      case 'Metadata':
        return this.metadata(body, fault);
      case 'FindCoordinator':
        return this.findCoordinator(body, fault);
      case 'ListOffsets':
        return this.listOffsets(nodeId, body, fault);
      case 'Fetch':
        return this.fetch(nodeId, body, fault);
      case 'OffsetCommit':
        return this.offsetCommit(nodeId, body, fault);
      case 'OffsetFetch':
        return this.offsetFetch(nodeId, body, fault);
      case 'DescribeGroups':
        return this.describeGroups(nodeId, body, fault);
      case 'ListGroups':
        return this.listGroups(nodeId, body, fault);
      case 'ConsumerGroupDescribe':
        return this.consumerGroupDescribe(nodeId, body, fault);
    }
  }

  /** Metadata v4: topics (nullable array of string), allow_auto_topic_creation. */
  private metadata(body: KafkaReader, fault: number | undefined): Answer {
    const asked = readArray(body, (r) => r.string()) ?? [...this.topics.keys()];
    body.int8();
    const w = new KafkaWriter().int32(0); // throttle time
    writeArray(w, this.brokers, (b) =>
      w.int32(b.nodeId).nullableString('127.0.0.1').int32(b.port).nullableString(null),
    );
    w.nullableString('fake-cluster').int32(0); // cluster id, controller id
    let errorCode = 0;
    writeArray(w, asked, (topic) => {
      const partitions = this.topics.get(topic);
      const code = fault ?? (partitions === undefined ? BrokerErrorCodes.UNKNOWN_TOPIC_OR_PARTITION : 0);
      errorCode ||= code;
      w.int16(code).nullableString(topic).int8(0);
      writeArray(w, code === 0 ? (partitions ?? []) : [], (p) => {
        const index = partitions!.indexOf(p);
        w.int16(0).int32(index).int32(p.leader);
        writeArray(w, [p.leader], (n) => w.int32(n)); // replicas
        writeArray(w, [p.leader], (n) => w.int32(n)); // in-sync replicas
      });
    });
    return { body: w.build(), errorCode };
  }

  /** FindCoordinator v1: key, key type. */
  private findCoordinator(body: KafkaReader, fault: number | undefined): Answer {
    const key = body.string();
    body.int8();
    const w = new KafkaWriter().int32(0);
    if (fault !== undefined) {
      w.int16(fault).nullableString('injected').int32(-1).nullableString('').int32(-1);
      return { body: w.build(), errorCode: fault };
    }
    const coordinator = this.broker(this.coordinatorOf(key));
    w.int16(0)
      .nullableString(null)
      .int32(coordinator.nodeId)
      .nullableString('127.0.0.1')
      .int32(coordinator.port);
    return { body: w.build(), errorCode: 0 };
  }

  /** ListOffsets v2: replica id, isolation level, topics [name, partitions [partition, timestamp]]. */
  private listOffsets(nodeId: number, body: KafkaReader, fault: number | undefined): Answer {
    body.int32();
    body.int8();
    const topics = readTopicPartitions(body, (r) => ({ partition: r.int32(), timestamp: r.int64() }));
    const w = new KafkaWriter().int32(0);
    let errorCode = 0;
    writeArray(w, topics, ({ topic, partitions }) => {
      w.nullableString(topic);
      writeArray(w, partitions, ({ partition, timestamp }) => {
        const state = this.topics.get(topic)?.[partition];
        const code = fault ?? this.leaderError(nodeId, state);
        errorCode ||= code;
        const offset =
          code !== 0 || state === undefined
            ? -1
            : timestamp === -2
              ? state.logStartOffset
              : timestamp === -1
                ? state.highWatermark
                : -1;
        w.int32(partition).int16(code).int64(-1).int64(offset);
      });
    });
    return { body: w.build(), errorCode };
  }

  /**
   * Fetch v4: replica id, max wait, min bytes, max bytes, isolation level, topics [name, partitions
   * [partition, fetch offset, max bytes]]. Answers without records: the tests route, they do not read.
   */
  private fetch(nodeId: number, body: KafkaReader, fault: number | undefined): Answer {
    body.int32();
    body.int32();
    body.int32();
    body.int32();
    body.int8();
    const topics = readTopicPartitions(body, (r) => ({
      partition: r.int32(),
      offset: r.int64(),
      max: r.int32(),
    }));
    const w = new KafkaWriter().int32(0);
    let errorCode = 0;
    writeArray(w, topics, ({ topic, partitions }) => {
      w.nullableString(topic);
      writeArray(w, partitions, ({ partition }) => {
        const state = this.topics.get(topic)?.[partition];
        const code = fault ?? this.leaderError(nodeId, state);
        errorCode ||= code;
        const highWatermark = code === 0 && state !== undefined ? state.highWatermark : -1;
        w.int32(partition).int16(code).int64(highWatermark).int64(highWatermark);
        w.int32(0); // no aborted transactions
        w.int32(0); // no records
      });
    });
    return { body: w.build(), errorCode };
  }

  /**
   * OffsetCommit v3: group id, generation, member id, retention, topics [name, partitions [partition,
   * offset, metadata]].
   */
  private offsetCommit(nodeId: number, body: KafkaReader, fault: number | undefined): Answer {
    const groupId = body.string();
    body.int32();
    body.string();
    body.int64();
    const topics = readTopicPartitions(body, (r) => ({
      partition: r.int32(),
      offset: r.int64(),
      metadata: r.nullableString(),
    }));
    const code = fault ?? this.coordinatorError(nodeId, groupId);
    const w = new KafkaWriter().int32(0);
    writeArray(w, topics, ({ topic, partitions }) => {
      w.nullableString(topic);
      writeArray(w, partitions, ({ partition, offset, metadata }) => {
        if (code === 0) this.commit(groupId, topic, partition, { offset, metadata });
        w.int32(partition).int16(code);
      });
    });
    return { body: w.build(), errorCode: code };
  }

  /** OffsetFetch v3: group id, topics (nullable array) [name, partitions [partition]]. */
  private offsetFetch(nodeId: number, body: KafkaReader, fault: number | undefined): Answer {
    const groupId = body.string();
    const asked = readNullableTopicPartitions(body, (r) => r.int32());
    const code = fault ?? this.coordinatorError(nodeId, groupId);
    const group = this.committed.get(groupId);
    const all = [...(group ?? [])].map(([topic, partitions]) => ({
      topic,
      partitions: [...partitions.keys()],
    }));
    const topics = code !== 0 ? [] : (asked ?? all);
    const w = new KafkaWriter().int32(0);
    writeArray(w, topics, ({ topic, partitions }) => {
      w.nullableString(topic);
      writeArray(w, partitions, (partition) => {
        const c = group?.get(topic)?.get(partition);
        w.int32(partition)
          .int64(c?.offset ?? -1)
          .nullableString(c?.metadata ?? '')
          .int16(0);
      });
    });
    w.int16(code);
    return { body: w.build(), errorCode: code };
  }

  /**
   * DescribeGroups v1: group ids. Groups of other types than classic are Dead to it, as Kafka 4.1
   * answers for consumer-protocol groups.
   */
  private describeGroups(nodeId: number, body: KafkaReader, fault: number | undefined): Answer {
    const groupIds = readArray(body, (r) => r.string()) ?? [];
    const w = new KafkaWriter().int32(0);
    let errorCode = 0;
    writeArray(w, groupIds, (groupId) => {
      const code = fault ?? this.coordinatorError(nodeId, groupId);
      errorCode ||= code;
      const group = this.groups.get(groupId);
      const classic = group === undefined || group.type === 'classic';
      const members = code === 0 && classic ? (group?.members ?? []) : [];
      const state = code !== 0 ? '' : classic ? this.stateOf(groupId) : 'Dead';
      const protocolType = members.length > 0 ? 'consumer' : '';
      w.int16(code).nullableString(groupId).nullableString(state).nullableString(protocolType);
      w.nullableString(members.length > 0 ? 'range' : '');
      writeArray(w, members, (m) => {
        w.nullableString(m.memberId).nullableString(m.clientId).nullableString(m.clientHost);
        w.int32(0).int32(0); // empty member metadata and assignment bytes
      });
    });
    return { body: w.build(), errorCode };
  }

  /**
   * ListGroups v5: states filter, types filter (compact arrays of compact strings), tagged fields. Lists
   * the groups this broker coordinates: those set with setGroup and those with commits (classic).
   */
  private listGroups(nodeId: number, body: KafkaReader, fault: number | undefined): Answer {
    const states = new Set(body.compactArray((r) => r.compactString().toLowerCase()));
    const types = new Set(body.compactArray((r) => r.compactString().toLowerCase()));
    body.taggedFields();
    const ids = [...new Set([...this.committed.keys(), ...this.groups.keys()])].filter(
      (id) => this.coordinatorOf(id) === nodeId,
    );
    const listed = ids
      .map((groupId) => ({
        groupId,
        type: this.groups.get(groupId)?.type ?? 'classic',
        state: this.stateOf(groupId),
      }))
      .filter(
        (g) =>
          (types.size === 0 || types.has(g.type)) && (states.size === 0 || states.has(g.state.toLowerCase())),
      );
    const w = new KafkaWriter().int32(0).int16(fault ?? 0);
    w.compactArray(fault === undefined ? listed : [], (g) => {
      w.compactNullableString(g.groupId).compactNullableString(g.type === 'share' ? 'share' : 'consumer');
      w.compactNullableString(g.state).compactNullableString(g.type).taggedFields();
    });
    w.taggedFields();
    return { body: w.build(), errorCode: fault ?? 0 };
  }

  /**
   * ConsumerGroupDescribe v0: group ids (compact), include authorized operations, tagged fields. Groups
   * of other types are GROUP_ID_NOT_FOUND, as Kafka answers.
   */
  private consumerGroupDescribe(nodeId: number, body: KafkaReader, fault: number | undefined): Answer {
    const groupIds = body.compactArray((r) => r.compactString());
    body.boolean();
    body.taggedFields();
    const w = new KafkaWriter().int32(0);
    let errorCode = 0;
    w.compactArray(groupIds, (groupId) => {
      const group = this.groups.get(groupId);
      const code =
        fault ??
        (this.coordinatorError(nodeId, groupId) ||
          (group?.type === 'consumer' ? 0 : BrokerErrorCodes.GROUP_ID_NOT_FOUND));
      errorCode ||= code;
      const members = code === 0 ? (group?.members ?? []) : [];
      w.int16(code)
        .compactNullableString(code === 0 ? null : 'not a consumer group')
        .compactNullableString(groupId);
      w.compactNullableString(code === 0 ? this.stateOf(groupId) : '')
        .int32(1)
        .int32(1);
      w.compactNullableString('uniform');
      w.compactArray(members, (m) => {
        w.compactNullableString(m.memberId).compactNullableString(null).compactNullableString(null).int32(1);
        w.compactNullableString(m.clientId).compactNullableString(m.clientHost);
        w.compactArray(
          (m.assignment ?? []).map((a) => a.topic),
          (t) => w.compactNullableString(t),
        );
        w.compactNullableString(null);
        for (let i = 0; i < 2; i++) {
          // assignment, then target assignment
          w.compactArray(m.assignment ?? [], (a) => {
            w.raw(Buffer.alloc(16, 1)).compactNullableString(a.topic);
            w.compactArray(a.partitions, (p) => w.int32(p)).taggedFields();
          });
          w.taggedFields();
        }
        w.taggedFields();
      });
      w.int32(-2147483648).taggedFields();
    });
    w.taggedFields();
    return { body: w.build(), errorCode };
  }

  /** The state of a group as the fake reports it: Stable with members, Empty with commits, else Dead. */
  private stateOf(groupId: string): string {
    const group = this.groups.get(groupId);
    if (group !== undefined && group.members.length > 0) return 'Stable';
    return group !== undefined || this.committed.has(groupId) ? 'Empty' : 'Dead';
  }

  private leaderError(nodeId: number, state: PartitionState | undefined): number {
    if (state === undefined) return BrokerErrorCodes.UNKNOWN_TOPIC_OR_PARTITION;
    return state.leader === nodeId ? 0 : BrokerErrorCodes.NOT_LEADER_OR_FOLLOWER;
  }

  private coordinatorOf(groupId: string): number {
    return this.coordinators.get(groupId) ?? 0;
  }

  private coordinatorError(nodeId: number, groupId: string): number {
    return this.coordinatorOf(groupId) === nodeId ? 0 : BrokerErrorCodes.NOT_COORDINATOR;
  }

  private commit(groupId: string, topic: string, partition: number, value: Committed): void {
    const group = this.committed.get(groupId) ?? new Map<string, Map<number, Committed>>();
    const partitions = group.get(topic) ?? new Map<number, Committed>();
    partitions.set(partition, value);
    group.set(topic, partitions);
    this.committed.set(groupId, group);
  }
}

/** One broker of a {@link FakeKafkaCluster}: a TCP server on a free port of 127.0.0.1. */
class FakeBroker {
  accepted = 0;
  private readonly sockets = new Set<Socket>();

  /** Connections accepted and not closed yet. */
  get open(): number {
    return this.sockets.size;
  }

  private constructor(
    readonly nodeId: number,
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async listen(nodeId: number, cluster: FakeKafkaCluster): Promise<FakeBroker> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const broker = new FakeBroker(nodeId, server, (server.address() as AddressInfo).port);
    server.on('connection', (socket) => broker.serve(socket, cluster));
    return broker;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: Socket, cluster: FakeKafkaCluster): void {
    this.accepted += 1;
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const frames = new FrameReader();
    socket.on('data', (chunk: Buffer) => {
      for (const frame of frames.push(chunk)) {
        if (socket.destroyed) return;
        let response: Buffer | 'drop';
        try {
          response = cluster.handle(this.nodeId, frame);
        } catch (error: unknown) {
          cluster.problems.push(
            `broker ${this.nodeId}: ${error instanceof Error ? error.message : String(error)}`,
          );
          response = 'drop';
        }
        if (response === 'drop') socket.destroy();
        else socket.write(response);
      }
    });
  }
}

function apiName(apiKey: number): FakeApiName | undefined {
  return (Object.keys(FakeApis) as FakeApiName[]).find((name) => FakeApis[name] === apiKey);
}

/** ApiVersions v0-v2: error code, [api key, min, max], and (v1+) the throttle time. */
function apiVersionsAnswer(
  version: number,
  versions: Readonly<Record<number, { min: number; max: number }>>,
): Answer {
  const w = new KafkaWriter().int16(0);
  writeArray(w, Object.entries(versions), ([key, v]) => w.int16(Number(key)).int16(v.min).int16(v.max));
  if (version >= 1) w.int32(0);
  return { body: w.build(), errorCode: 0 };
}

/** A `[topic, [partition ...]]` array as most requests carry it. */
function readTopicPartitions<P>(
  body: KafkaReader,
  readPartition: (reader: KafkaReader) => P,
): { topic: string; partitions: P[] }[] {
  const topics = readNullableTopicPartitions(body, readPartition);
  if (topics === null) throw new Error('a null topic array');
  return topics;
}

/** The same, where null (every topic) is allowed. */
function readNullableTopicPartitions<P>(
  body: KafkaReader,
  readPartition: (reader: KafkaReader) => P,
): { topic: string; partitions: P[] }[] | null {
  return readArray(body, (r) => ({ topic: r.string(), partitions: readArray(r, readPartition) ?? [] }));
}
