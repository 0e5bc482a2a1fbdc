// Everything the secured bed is secured with, made once per bed in its work folder: the CA and its
// certificates, the admins' random passwords, and a password file per user (the services read secrets
// from files). The same material secures both Kafka clusters and nats-server.
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createCertificateAuthority, issueCertificate } from './certificates.js';
import { TestbedError } from './errors.js';
import type { KafkaClusterSecurity } from './kafka-security.js';
import type { NatsServerSecurity } from './nats-config.js';
import type { SecureTestbedOptions, TestbedSecurityInfo } from './secure-options.js';

/** The bed's own principals; callers cannot take these names. */
const KAFKA_ADMIN = 'admin';
const KAFKA_BROKER = 'broker';
const NATS_ADMIN = 'admin';

const SERVER_HOSTS = ['127.0.0.1', 'localhost'] as const;
const DAY_MS = 24 * 3_600_000;

// Names and passwords end up in the storage tool's --add-scram syntax, a JAAS line, a properties file and
// a nats-server config: a conservative alphabet keeps every one of them free of quoting rules. ('$' is
// out too: nats-server reads a password starting with "$2" as a bcrypt hash.)
const SAFE_NAME = /^[A-Za-z0-9._-]{1,64}$/;
const SAFE_PASSWORD = /^[A-Za-z0-9._~@%+:-]{1,128}$/;

/** The material of a secured bed: what the caller is told, and what each server is started with. */
export interface PreparedSecurity {
  info: TestbedSecurityInfo;
  kafka: KafkaClusterSecurity;
  nats: NatsServerSecurity;
}

/** A random password in the safe alphabet (base64url, 144 bits). */
export function randomPassword(): string {
  return randomBytes(18).toString('base64url');
}

/**
 * Checks the options (every problem reported at once, as a TestbedError `INVALID_OPTIONS`), then creates
 * the CA, the server, client and expired certificates under `<workDir>/tls` and the password files under
 * `<workDir>/secrets`.
 */
export async function prepareSecurity(
  workDir: string,
  options: SecureTestbedOptions,
): Promise<PreparedSecurity> {
  checkSecureOptions(options);
  const tlsDir = join(workDir, 'tls');
  const ca = await createCertificateAuthority(tlsDir);
  const now = Date.now();
  const [server, client, expired] = await Promise.all([
    issueCertificate(ca, {
      name: 'offsetsync-testbed-server',
      dir: tlsDir,
      hosts: SERVER_HOSTS,
      // The brokers present it as clients too, to the controller listener.
      clientAuth: true,
    }),
    issueCertificate(ca, {
      name: 'offsetsync-testbed-client',
      dir: tlsDir,
      serverAuth: false,
      clientAuth: true,
    }),
    issueCertificate(ca, {
      name: 'offsetsync-testbed-expired-server',
      dir: tlsDir,
      hosts: SERVER_HOSTS,
      notBefore: new Date(now - 8 * DAY_MS),
      notAfter: new Date(now - DAY_MS),
    }),
  ]);

  const kafkaAdmin = { username: KAFKA_ADMIN, password: randomPassword() };
  const natsAdmin = { user: NATS_ADMIN, password: randomPassword() };
  const secretsDir = join(workDir, 'secrets');
  await mkdir(secretsDir, { recursive: true, mode: 0o700 });
  const writeSecret = async (
    kind: 'kafka' | 'nats',
    user: string,
    password: string,
  ): Promise<[string, string]> => {
    const file = join(secretsDir, `${kind}-${user}.password`);
    await writeFile(file, password, { mode: 0o600 });
    return [user, file];
  };
  const kafkaPasswordFiles = Object.fromEntries(
    await Promise.all(
      [[kafkaAdmin.username, kafkaAdmin.password] as const, ...Object.entries(options.kafkaUsers)].map(
        ([user, password]) => writeSecret('kafka', user, password),
      ),
    ),
  );
  const natsPasswordFiles = Object.fromEntries(
    await Promise.all(
      [{ user: natsAdmin.user, password: natsAdmin.password }, ...options.natsUsers].map(
        ({ user, password }) => writeSecret('nats', user, password),
      ),
    ),
  );
  const fileOf = (files: Record<string, string>, user: string): string => {
    const file = files[user];
    if (file === undefined) throw new Error(`no password file was written for ${user}`);
    return file;
  };

  const info: TestbedSecurityInfo = {
    caFile: ca.certFile,
    ca,
    serverCertificate: { certFile: server.certFile, keyFile: server.keyFile },
    clientCertificate: { certFile: client.certFile, keyFile: client.keyFile },
    expiredServerCertificate: { certFile: expired.certFile, keyFile: expired.keyFile },
    kafkaAdmin: { ...kafkaAdmin, passwordFile: fileOf(kafkaPasswordFiles, kafkaAdmin.username) },
    natsAdmin: { ...natsAdmin, passwordFile: fileOf(natsPasswordFiles, natsAdmin.user) },
    kafkaUsers: { ...options.kafkaUsers },
    natsUsers: Object.fromEntries(options.natsUsers.map(({ user, password }) => [user, password])),
    kafkaPasswordFiles,
    natsPasswordFiles,
  };
  return {
    info,
    kafka: {
      caFile: ca.certFile,
      certificate: server,
      certificateSubject: server.subject,
      // One broker password for both clusters is fine: they are independent and equally throwaway.
      broker: { username: KAFKA_BROKER, password: randomPassword() },
      admin: kafkaAdmin,
      users: options.kafkaUsers,
    },
    nats: {
      caFile: ca.certFile,
      certFile: server.certFile,
      keyFile: server.keyFile,
      admin: natsAdmin,
      // The admin has no permissions block: nats-server then allows every subject.
      users: [{ user: natsAdmin.user, password: natsAdmin.password }, ...options.natsUsers],
    },
  };
}

/** Throws a TestbedError `INVALID_OPTIONS` naming every problem of the options at once. */
export function checkSecureOptions(options: SecureTestbedOptions): void {
  const problems: string[] = [];
  for (const [name, password] of Object.entries(options.kafkaUsers)) {
    if (name === KAFKA_ADMIN || name === KAFKA_BROKER) problems.push(`Kafka user ${name} is the bed's own`);
    if (!SAFE_NAME.test(name))
      problems.push(`Kafka user name ${JSON.stringify(name)} is not ${SAFE_NAME.source}`);
    if (!SAFE_PASSWORD.test(password))
      problems.push(`the password of Kafka user ${name} is not ${SAFE_PASSWORD.source}`);
  }
  const seen = new Set<string>();
  for (const { user, password } of options.natsUsers) {
    if (user === NATS_ADMIN) problems.push(`NATS user ${user} is the bed's own`);
    if (seen.has(user)) problems.push(`NATS user ${user} is listed twice`);
    seen.add(user);
    if (!SAFE_NAME.test(user))
      problems.push(`NATS user name ${JSON.stringify(user)} is not ${SAFE_NAME.source}`);
    if (!SAFE_PASSWORD.test(password))
      problems.push(`the password of NATS user ${user} is not ${SAFE_PASSWORD.source}`);
  }
  if (problems.length > 0) {
    throw new TestbedError('INVALID_OPTIONS', `invalid secure test bed options: ${problems.join('; ')}`);
  }
}
