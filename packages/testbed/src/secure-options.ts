// What a caller asks of the secured test bed, and what it gets back to reach it. Both sides are plain data:
// the info is written to the state file `npm run infra -- up --secure` leaves behind.
import type { CertificateAuthority, CertificateFiles } from './certificates.js';

/** A nats-server `permissions` block: publish and subscribe allow/deny lists and response permissions. */
export interface NatsPermissions {
  publish?: { allow?: string[]; deny?: string[] };
  subscribe?: { allow?: string[]; deny?: string[] };
  /** `true`, or a limit on how many responses and for how long (a duration like `"1m"`). */
  allow_responses?: boolean | { max?: number; expires?: string };
}

/** One NATS user of the secured bed. */
export interface NatsUserSpec {
  user: string;
  password: string;
  /**
   * nats-server `permissions`. Omitted = none granted beyond nats-server's defaults, and nats-server's
   * default for a user without a permissions block is to allow every subject.
   */
  permissions?: NatsPermissions;
}

/** The users of a secured test bed (see `startTestbed`). */
export interface SecureTestbedOptions {
  /** SCRAM-SHA-512 users created on both Kafka clusters at format time (besides the bed's admin): user name -> password. */
  kafkaUsers: Record<string, string>;
  /** NATS users (besides the bed's admin, who may do everything), each with a nats-server permissions block. */
  natsUsers: NatsUserSpec[];
}

/** How to reach the secured bed: its CA, certificates, admins, users and their password files. */
export interface TestbedSecurityInfo {
  /** The PEM CA certificate every server certificate of the bed is signed by; trust this. */
  caFile: string;
  /** The bed's CA itself, so a test can issue more certificates from it (`issueCertificate`). */
  ca: CertificateAuthority;
  /** The server certificate (IP SAN 127.0.0.1, DNS localhost) of both Kafka brokers and nats-server. */
  serverCertificate: CertificateFiles;
  /** A client certificate from the same CA, for mutual TLS tests. */
  clientCertificate: CertificateFiles;
  /** A server certificate for 127.0.0.1/localhost that expired yesterday, for tests of servers that must refuse it. */
  expiredServerCertificate: CertificateFiles;
  /** The Kafka super user of both clusters (SCRAM-SHA-512). */
  kafkaAdmin: { username: string; password: string; passwordFile: string };
  /** The NATS user allowed everything. */
  natsAdmin: { user: string; password: string; passwordFile: string };
  /** The Kafka users asked for: user name -> password (the admin not included). */
  kafkaUsers: Record<string, string>;
  /** The NATS users asked for: user -> password (the admin not included). */
  natsUsers: Record<string, string>;
  /**
   * Kafka user name -> file holding the password (no trailing newline), the admin's included:
   * `<workDir>/secrets/kafka-<user>.password`. The services read secrets from files.
   */
  kafkaPasswordFiles: Record<string, string>;
  /** NATS user -> password file, the admin's included: `<workDir>/secrets/nats-<user>.password`. */
  natsPasswordFiles: Record<string, string>;
}
