// Decoded response shapes: what kafkajs' response decoders return for the versions kafkajs 2.2.4
// negotiates with Kafka 2.x-4.x. The adapter reads them without kafkajs' parsers (which throw the first
// partition's error code and drop every other partition's answer), so every partition's error code is here.
import type { HeaderValue } from '../types.js';

export interface MetadataResponse {
  brokers: { nodeId: number }[];
  topicMetadata: {
    topicErrorCode: number;
    topic: string;
    partitionMetadata: { partitionErrorCode: number; partitionId: number; leader: number }[];
  }[];
}

export interface ListOffsetsResponse {
  responses: {
    topic: string;
    partitions: {
      partition: number;
      errorCode: number;
      timestamp?: string;
      offset?: string;
      offsets?: string[];
    }[];
  }[];
}

/** A record as kafkajs decodes it (src/protocol/recordBatch/record/v0/decoder.js). */
export interface DecodedRecord {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: Record<string, HeaderValue | HeaderValue[]>;
  isControlRecord?: boolean;
  /** Legacy message sets only: their attributes carry the timestamp type. */
  attributes?: number;
  /** Absent for legacy message sets (magic 0 and 1). */
  batchContext?: {
    firstOffset: string;
    lastOffsetDelta: number;
    producerId: string;
    inTransaction: boolean;
    isControlBatch: boolean;
    timestampType: number;
  };
}

export interface FetchResponse {
  errorCode?: number;
  responses: {
    topicName: string;
    partitions: {
      partition: number;
      errorCode: number;
      highWatermark: string;
      lastStableOffset?: string;
      /** kafkajs 2.2.4 decodes log_start_offset under this misspelt name. */
      lastStartOffset?: string;
      logStartOffset?: string;
      abortedTransactions?: { producerId: string; firstOffset: string }[];
      messages: DecodedRecord[];
    }[];
  }[];
}

export interface OffsetCommitResponse {
  responses: { topic: string; partitions: { partition: number; errorCode: number }[] }[];
}

export interface OffsetFetchResponse {
  errorCode?: number;
  responses: {
    topic: string;
    partitions: { partition: number; offset: string; metadata: string | null; errorCode: number }[];
  }[];
}

export interface DescribeGroupsResponse {
  groups: {
    errorCode: number;
    groupId: string;
    state: string;
    protocolType: string;
    members: { memberId: string; clientId: string; clientHost: string }[];
  }[];
}
