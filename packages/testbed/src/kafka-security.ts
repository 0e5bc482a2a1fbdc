// The secured broker's listeners: SASL_SSL with SCRAM-SHA-512 for clients and between brokers, SSL with
// a required client certificate for the controller, and the standard KRaft authorizer that denies what no
// ACL allows. Users are created by the storage tool at format time, so the broker starts with them.
import { readFileSync } from 'node:fs';
import type { KafkaConfig } from 'kafkajs';
import type { CertificateFiles } from './certificates.js';

/** A SCRAM user name and password. */
export interface ScramCredentials {
  username: string;
  password: string;
}

/** What secures one Kafka cluster of the bed. */
export interface KafkaClusterSecurity {
  /** PEM CA certificate the broker trusts (and clients verify it with). */
  caFile: string;
  /** The broker's certificate: its server identity on both listeners and its client identity on the controller's. */
  certificate: CertificateFiles;
  /** The certificate's subject as Java prints it; mapped to the broker's own principal `User:<broker.username>`. */
  certificateSubject: string;
  /** The SCRAM user the broker authenticates as between brokers; a super user. */
  broker: ScramCredentials;
  /** The SCRAM super user the readiness check and the ACL helpers log in as. */
  admin: ScramCredentials;
  /** More SCRAM users: name -> password. */
  users: Readonly<Record<string, string>>;
}

/** The security protocols of a bed cluster's client and controller listeners. */
export type KafkaSecurityProtocol = 'PLAINTEXT' | 'SASL_SSL';
export type KafkaControllerSecurityProtocol = 'PLAINTEXT' | 'SSL';

const SCRAM_LOGIN_MODULE = 'org.apache.kafka.common.security.scram.ScramLoginModule';

/** server.properties lines of the listeners, TLS, SASL and authorizer of a secured broker. */
export function secureListenerProperties(options: {
  brokerPort: number;
  controllerPort: number;
  keystoreFile: string;
  security: KafkaClusterSecurity;
}): string[] {
  const { brokerPort, controllerPort, keystoreFile, security } = options;
  const { broker, admin } = security;
  return [
    `listeners=SASL_SSL://127.0.0.1:${brokerPort},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=SASL_SSL://127.0.0.1:${brokerPort}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=SASL_SSL:SASL_SSL,CONTROLLER:SSL',
    'inter.broker.listener.name=SASL_SSL',
    'sasl.enabled.mechanisms=SCRAM-SHA-512',
    'sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512',
    `listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=${SCRAM_LOGIN_MODULE} required username="${broker.username}" password="${broker.password}";`,
    // PEM stores (a file with the key and then the certificate) spare a keytool run per cluster.
    'ssl.keystore.type=PEM',
    `ssl.keystore.location=${keystoreFile}`,
    'ssl.truststore.type=PEM',
    `ssl.truststore.location=${security.caFile}`,
    // The controller listener admits only holders of a certificate from the bed's CA; the broker's own
    // connection to it presents the broker certificate, which the rule below maps to the broker's principal.
    'listener.name.controller.ssl.client.auth=required',
    `ssl.principal.mapping.rules=RULE:^${security.certificateSubject}$/${broker.username}/,DEFAULT`,
    'authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'allow.everyone.if.no.acl.found=false',
    `super.users=User:${broker.username};User:${admin.username}`,
  ];
}

/** The storage tool's `--add-scram` arguments creating every SCRAM user of the cluster. */
export function scramFormatArgs(security: KafkaClusterSecurity): string[] {
  const users: [string, string][] = [
    [security.broker.username, security.broker.password],
    [security.admin.username, security.admin.password],
    ...Object.entries(security.users),
  ];
  return users.flatMap(([name, password]) => [
    '--add-scram',
    `SCRAM-SHA-512=[name=${name},password=${password}]`,
  ]);
}

/** kafkajs options logging in as the cluster's admin over SASL_SSL, verifying the broker with the bed's CA. */
export function adminClientSecurity(security: KafkaClusterSecurity): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  return {
    ssl: { ca: [readFileSync(security.caFile)], rejectUnauthorized: true },
    sasl: {
      mechanism: 'scram-sha-512',
      username: security.admin.username,
      password: security.admin.password,
    },
  };
}
