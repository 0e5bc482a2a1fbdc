// ConsumerGroupDescribe v0 (API key 69, flexible): groups of the KIP-848 consumer protocol, which
// DescribeGroups reports as Dead. Kafka's schema:
// clients/src/main/resources/common/message/ConsumerGroupDescribe{Request,Response}.json.
import type { KafkaReader, KafkaWriter } from '../binary.js';
import type { FlexibleApi } from './flexible-api.js';

export interface ConsumerGroupDescribeArgs {
  groupIds: readonly string[];
}

/** Partitions of topics, as an assignment lists them. */
export interface AssignedTopic {
  /** Kafka's topic id, in URL-safe base64 as Kafka prints it. */
  topicId: string;
  topicName: string;
  partitions: number[];
}

export interface DescribedMember {
  memberId: string;
  instanceId: string | null;
  rackId: string | null;
  memberEpoch: number;
  clientId: string;
  clientHost: string;
  subscribedTopicNames: string[];
  subscribedTopicRegex: string | null;
  assignment: AssignedTopic[];
  targetAssignment: AssignedTopic[];
}

export interface DescribedGroup {
  errorCode: number;
  errorMessage: string | null;
  groupId: string;
  groupState: string;
  groupEpoch: number;
  assignmentEpoch: number;
  assignorName: string;
  members: DescribedMember[];
  authorizedOperations: number;
}

export interface ConsumerGroupDescribeResponse {
  throttleTimeMs: number;
  groups: DescribedGroup[];
}

function readAssignment(reader: KafkaReader): AssignedTopic[] {
  const topics = reader.compactArray((r) => {
    const topic: AssignedTopic = {
      topicId: r.uuid(),
      topicName: r.compactString(),
      partitions: r.compactArray((p) => p.int32()),
    };
    r.taggedFields();
    return topic;
  });
  reader.taggedFields();
  return topics;
}

function readMember(reader: KafkaReader): DescribedMember {
  const member: DescribedMember = {
    memberId: reader.compactString(),
    instanceId: reader.compactNullableString(),
    rackId: reader.compactNullableString(),
    memberEpoch: reader.int32(),
    clientId: reader.compactString(),
    clientHost: reader.compactString(),
    subscribedTopicNames: reader.compactArray((r) => r.compactString()),
    subscribedTopicRegex: reader.compactNullableString(),
    assignment: readAssignment(reader),
    targetAssignment: readAssignment(reader),
  };
  reader.taggedFields();
  return member;
}

function readGroup(reader: KafkaReader): DescribedGroup {
  const group: DescribedGroup = {
    errorCode: reader.int16(),
    errorMessage: reader.compactNullableString(),
    groupId: reader.compactString(),
    groupState: reader.compactString(),
    groupEpoch: reader.int32(),
    assignmentEpoch: reader.int32(),
    assignorName: reader.compactString(),
    members: reader.compactArray(readMember),
    authorizedOperations: reader.int32(),
  };
  reader.taggedFields();
  return group;
}

export const ConsumerGroupDescribeApi: FlexibleApi<ConsumerGroupDescribeArgs, ConsumerGroupDescribeResponse> =
  {
    name: 'ConsumerGroupDescribe',
    apiKey: 69,
    versions: [0],
    encode(writer: KafkaWriter, _version: number, args: ConsumerGroupDescribeArgs): void {
      writer.compactArray(args.groupIds, (id) => writer.compactNullableString(id));
      writer.boolean(false); // include authorized operations
      writer.taggedFields();
    },
    decode(reader: KafkaReader): ConsumerGroupDescribeResponse {
      const throttleTimeMs = reader.int32();
      const groups = reader.compactArray(readGroup);
      reader.taggedFields();
      return { throttleTimeMs, groups };
    },
  };
