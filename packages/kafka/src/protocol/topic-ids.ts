// Metadata v10-v12 (API key 3, flexible): the topic ids of named topics (KIP-516). A topic deleted and
// created again under the same name gets a new id, which is how a reader tells that records it kept of
// the old topic are no longer there. kafkajs speaks Metadata up to v6, before topic ids. Kafka's schema:
// clients/src/main/resources/common/message/Metadata{Request,Response}.json.
import type { KafkaReader, KafkaWriter } from '../binary.js';
import type { FlexibleApi } from './flexible-api.js';

export interface TopicIdsArgs {
  topics: readonly string[];
}

export interface TopicIdAnswer {
  errorCode: number;
  name: string | null;
  /** Kafka's topic id, in URL-safe base64 as Kafka prints it. */
  topicId: string;
}

export interface TopicIdsResponse {
  throttleTimeMs: number;
  topics: TopicIdAnswer[];
}

/** The all-zero id, which asks for a topic by name. */
const NO_TOPIC_ID = Buffer.alloc(16);

function skipPartition(reader: KafkaReader): void {
  reader.int16(); // error code
  reader.int32(); // partition index
  reader.int32(); // leader id
  reader.int32(); // leader epoch
  reader.compactArray((r) => r.int32()); // replicas
  reader.compactArray((r) => r.int32()); // in-sync replicas
  reader.compactArray((r) => r.int32()); // offline replicas
  reader.taggedFields();
}

export const TopicIdsApi: FlexibleApi<TopicIdsArgs, TopicIdsResponse> = {
  name: 'Metadata',
  apiKey: 3,
  versions: [10, 11, 12],
  encode(writer: KafkaWriter, version: number, args: TopicIdsArgs): void {
    writer.compactArray(args.topics, (name) => {
      writer.raw(NO_TOPIC_ID).compactNullableString(name).taggedFields();
    });
    writer.boolean(false); // allow auto topic creation
    if (version <= 10) writer.boolean(false); // include cluster authorized operations
    writer.boolean(false); // include topic authorized operations
    writer.taggedFields();
  },
  decode(reader: KafkaReader, version: number): TopicIdsResponse {
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
    const topics = reader.compactArray((r): TopicIdAnswer => {
      const errorCode = r.int16();
      const name = r.compactNullableString();
      const topicId = r.uuid();
      r.boolean(); // internal
      r.compactArray(skipPartition);
      r.int32(); // topic authorized operations
      r.taggedFields();
      return { errorCode, name, topicId };
    });
    if (version <= 10) reader.int32(); // cluster authorized operations
    reader.taggedFields();
    return { throttleTimeMs, topics };
  },
};
