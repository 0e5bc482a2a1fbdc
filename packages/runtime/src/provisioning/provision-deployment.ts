// Everything offsetsync keeps in JetStream for one deployment, created or corrected in one step with admin
// rights (`offsetsync provision`, a Helm hook Job), so that no long-running service needs those rights:
// the four streams, the applied-versions KV bucket, and per link the translator's and the committer's
// durable consumers (the committer's of the link's mode).
import type { JetStreamClient, JetStreamManager } from 'nats';
import { Names } from '@offsetsync/contracts';
import {
  committerConsumerSpec,
  provisionDurableConsumer,
  provisionKvBucket,
  provisionStreams,
  streamSpecs,
  translatorConsumerSpec,
  type ProvisionAction,
} from '@offsetsync/jetstream';
import { COMMITTER_ACK_WAIT_DEFAULT_MS, type OffsetSyncConfig } from '../config/schema.js';

/** What provisioning did to each stream, bucket and consumer (`created`, `updated`, `unchanged`). */
export interface ProvisionReport {
  streams: Record<string, ProvisionAction>;
  buckets: Record<string, 'ensured'>;
  consumers: Record<string, ProvisionAction>;
}

/** Creates what is missing and corrects what differs. Idempotent; safe to run on every upgrade. */
export async function provisionDeployment(
  js: JetStreamClient,
  jsm: JetStreamManager,
  config: OffsetSyncConfig,
): Promise<ProvisionReport> {
  const names = new Names(config.nats.subjectPrefix);
  const replicas = config.nats.streamReplicas;
  const streams = await provisionStreams(jsm, streamSpecs(names, replicas));
  const bucket = names.bucket('applied-versions');
  await provisionKvBucket(js, bucket, replicas);
  const consumers: Record<string, ProvisionAction> = {};
  const ackWaitMs = config.committer?.ackWaitMs ?? COMMITTER_ACK_WAIT_DEFAULT_MS;
  for (const { source, target, mode } of config.links) {
    for (const spec of [
      translatorConsumerSpec(names, source, target),
      committerConsumerSpec(names, source, target, ackWaitMs, mode),
    ]) {
      consumers[`${spec.stream}/${spec.durable}`] = await provisionDurableConsumer(jsm, spec);
    }
  }
  return { streams, buckets: { [bucket]: 'ensured' }, consumers };
}
