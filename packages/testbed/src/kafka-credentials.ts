// How a client logs in to a secured bed cluster: SASL_SSL with SCRAM-SHA-512, the broker verified with
// the bed's CA. The test clients, the Kafka command-line tools and the test replicator all take this shape.
import { TestbedError } from './errors.js';
import type { TestbedInfo } from './testbed.js';

/** A SCRAM-SHA-512 login over TLS to a secured bed cluster. */
export interface KafkaClientCredentials {
  /** PEM CA certificate to verify the broker with. */
  caFile: string;
  username: string;
  password: string;
}

/**
 * The login of `username` (one of the bed's Kafka users, or its admin) on a secured bed. Throws a
 * TestbedError `INVALID_OPTIONS` on a plaintext bed or for a user the bed does not have.
 */
export function bedKafkaCredentials(testbed: TestbedInfo, username: string): KafkaClientCredentials {
  const { security } = testbed;
  if (security === undefined) {
    throw new TestbedError('INVALID_OPTIONS', 'the test bed is not secured: it has no Kafka users');
  }
  const password =
    username === security.kafkaAdmin.username ? security.kafkaAdmin.password : security.kafkaUsers[username];
  if (password === undefined) {
    throw new TestbedError('INVALID_OPTIONS', `the test bed has no Kafka user ${username}`);
  }
  return { caFile: security.caFile, username, password };
}
