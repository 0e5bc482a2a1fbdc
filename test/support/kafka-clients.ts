import kafkajs, { type Admin, type Kafka as KafkaClient } from 'kafkajs';
import { onTestFinished } from 'vitest';

const { Kafka, logLevel } = kafkajs;

/** A kafkajs client for one of the test bed's clusters, quiet unless something is wrong. */
export function kafkaClient(bootstrapServers: string, clientId = 'offsetsync-test'): KafkaClient {
  return new Kafka({ clientId, brokers: [bootstrapServers], logLevel: logLevel.ERROR });
}

/** A connected admin client, disconnected when the current test finishes. */
export async function connectedAdmin(kafka: KafkaClient): Promise<Admin> {
  const admin = kafka.admin();
  await admin.connect();
  onTestFinished(() => admin.disconnect());
  return admin;
}
