import kafkajs, { type Admin, type Kafka as KafkaClient } from 'kafkajs';
import pino from 'pino';
import { onTestFinished } from 'vitest';
import { KafkaAdapter } from '@offsetsync/kafka';

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

/** The project's Kafka adapter for one of the test bed's clusters, quiet, disconnected when the current test finishes. */
export function testAdapter(bootstrapServers: string, clientId = 'offsetsync-test'): KafkaAdapter {
  const adapter = new KafkaAdapter({
    cluster: { bootstrapServers: [bootstrapServers], connectionTimeoutMs: 3000, requestTimeoutMs: 30_000 },
    clientId,
    logger: pino({ level: 'silent' }),
  });
  onTestFinished(() => adapter.disconnect());
  return adapter;
}
