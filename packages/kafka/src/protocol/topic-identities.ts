// Metadata v10-v12 (API key 3, flexible): the topic ids of named topics (KIP-516) and the leader epoch of
// each of their partitions. A topic deleted and created again under the same name gets a new id; a
// partition whose leader changed has a higher leader epoch, and only a leader change can rewrite records a
// reader already read (an unclean election truncates the log). Together they tell a reader whether records
// it kept are still the partition's. kafkajs speaks Metadata up to v6, before topic ids. Kafka's schema:
// clients/src/main/resources/common/message/Metadata{Request,Response}.json.
import type { KafkaReader, KafkaWriter } from '../binary.js';
import type { FlexibleApi } from './flexible-api.js';

export interface TopicIdentitiesArgs {
  topics: readonly string[];
}

export interface PartitionLeaderAnswer {
  errorCode: number;
  partition: number;
  /** -1 when the broker does not know it. */
  leaderEpoch: number;
}

export interface TopicIdentityAnswer {
  errorCode: number;
  name: string | null;
  /** Kafka's topic id, in URL-safe base64 as Kafka prints it. */
  topicId: string;
  partitions: PartitionLeaderAnswer[];
}

export interface TopicIdentitiesResponse {
  throttleTimeMs: number;
  topics: TopicIdentityAnswer[];
}

/** The all-zero id, which asks for a topic by name. */
const NO_TOPIC_ID = Buffer.alloc(16);

function decodePartition(reader: KafkaReader): PartitionLeaderAnswer {
  const errorCode = reader.int16();
  const partition = reader.int32();
  reader.int32(); // leader id
  const leaderEpoch = reader.int32();
  reader.compactArray((r) => r.int32()); // replicas
  reader.compactArray((r) => r.int32()); // in-sync replicas
  reader.compactArray((r) => r.int32()); // offline replicas
  reader.taggedFields();
  return { errorCode, partition, leaderEpoch };
}

export const TopicIdentitiesApi: FlexibleApi<TopicIdentitiesArgs, TopicIdentitiesResponse> = {
  name: 'Metadata',
  apiKey: 3,
  versions: [10, 11, 12],
  encode(writer: KafkaWriter, version: number, args: TopicIdentitiesArgs): void {
    writer.compactArray(args.topics, (name) => {
      writer.raw(NO_TOPIC_ID).compactNullableString(name).taggedFields();
    });
    writer.boolean(false); // allow auto topic creation
    if (version <= 10) writer.boolean(false); // include cluster authorized operations
    writer.boolean(false); // include topic authorized operations
    writer.taggedFields();
  },
  decode(reader: KafkaReader, version: number): TopicIdentitiesResponse {
    const throttleTimeMs = reader.int32();
    reader.compactArray((r) => {
      r.int32(); // node id
      r.compactString(); // host
      r.int32(); // port
      r.compactNullableString(); // rack
      r.taggedFields();
    });
    reader.compactNullableString(); // cluster id
    reader.int32(); // controller id
    const topics = reader.compactArray((r): TopicIdentityAnswer => {
      const errorCode = r.int16();
      const name = r.compactNullableString();
      const topicId = r.uuid();
      r.boolean(); // internal
      const partitions = r.compactArray(decodePartition);
      r.int32(); // topic authorized operations
      r.taggedFields();
      return { errorCode, name, topicId, partitions };
    });
    if (version <= 10) reader.int32(); // cluster authorized operations
    reader.taggedFields();
    return { throttleTimeMs, topics };
  },
};
