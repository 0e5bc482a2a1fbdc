// The secured test bed: Kafka only over SASL_SSL with SCRAM users and enforced ACLs, a controller that
// admits only certificate holders, NATS only over TLS with per-user permissions. One bed for the whole
// file (two more JVMs beside the suite's own bed on a 2-core machine). Every refusal is checked next to a
// probe or login that succeeds, so a check cannot pass merely because nothing answers at all.
import { randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { connect, Events, StringCodec, type NatsConnection, type NatsError } from 'nats';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { startReplicator } from '@offsetsync/harness';
import { loadConfig } from '@offsetsync/runtime';
import { stopProcess } from '../infra/processes.js';
import {
  bedKafkaCredentials,
  createCertificateAuthority,
  issueCertificate,
  restartTestbedNats,
  startTestbed,
  stopTestbed,
  TestbedError,
  type TestbedInfo,
  type TestbedSecurityInfo,
} from '../infra/testbed.js';
import { secureTestConfig } from '../support/config.js';
import { grantAcls, revokeAcls, type AclSpec } from '../support/kafka-acls.js';
import { bedKafkaClient, connectedAdmin, kafkaClient, testAdapter } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';
import { kafkaAnswersApiVersions, natsPlaintextPing } from '../support/wire-probes.js';

const { Kafka, logLevel } = kafkajs;
const plaintextBed = inject('testbed');
const sc = StringCodec();

const KAFKA_USER = 'alice';
const NATS_PUBLISHER = 'publisher';

let bed: TestbedInfo;
let security: TestbedSecurityInfo;

beforeAll(async () => {
  bed = await startTestbed({
    log: (line) => console.log(`[secure testbed] ${line}`),
    secure: {
      kafkaUsers: { [KAFKA_USER]: randomBytes(12).toString('base64url') },
      natsUsers: [
        {
          user: NATS_PUBLISHER,
          password: randomBytes(12).toString('base64url'),
          permissions: { publish: { allow: ['allowed.>'] }, subscribe: { allow: ['_INBOX.>'] } },
        },
      ],
    },
  });
  if (bed.security === undefined) throw new Error('startTestbed({ secure }) returned a bed without security');
  security = bed.security;
}, 300_000);

afterAll(async () => {
  if (bed !== undefined) await stopTestbed(bed);
}, 60_000);

/** The `type` (kafkajs protocol errors) and `name` of an error and of every error it wraps. */
function errorKinds(error: unknown): string[] {
  if (!(error instanceof Error)) return [];
  const { type, errors, cause } = error as Error & { type?: unknown; errors?: unknown; cause?: unknown };
  return [
    error.name,
    ...(typeof type === 'string' ? [type] : []),
    ...(Array.isArray(errors) ? errors.flatMap(errorKinds) : []),
    ...errorKinds(cause),
  ];
}

async function kindsOfFailure(work: () => Promise<unknown>): Promise<string[]> {
  try {
    await work();
  } catch (error: unknown) {
    return errorKinds(error);
  }
  throw new Error('expected the call to fail, and it succeeded');
}

function hostPort(bootstrapServers: string): [string, number] {
  const [host, port] = bootstrapServers.split(':');
  return [host ?? '', Number(port)];
}

async function withDeadline<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function natsAs(user: string, password: string): Promise<NatsConnection> {
  const nc = await connect({
    servers: bed.nats.url,
    tls: { caFile: security.caFile },
    user,
    pass: password,
    reconnect: false,
  });
  onTestFinished(() => nc.close());
  return nc;
}

describe('secured test bed: Kafka', () => {
  it('lets a SCRAM user in, refuses what no ACL allows and allows what a grant does', async () => {
    const admin = await connectedAdmin(bedKafkaClient(bed, 'source', KAFKA_USER));
    const prefix = `${uniqueName('acl')}.`;
    const topic = `${prefix}granted`;

    expect(await kindsOfFailure(() => admin.createTopics({ topics: [{ topic }] }))).toContain(
      'TOPIC_AUTHORIZATION_FAILED',
    );

    const grants: AclSpec[] = (['CREATE', 'DESCRIBE'] as const).map((operation) => ({
      principal: `User:${KAFKA_USER}`,
      resourceType: 'TOPIC',
      resourceName: prefix,
      patternType: 'PREFIXED',
      operation,
    }));
    await grantAcls(bed, 'source', grants);
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    expect(metadata.topics[0]?.partitions).toHaveLength(2);

    // The grant covers its prefix only, and only on the cluster it was made on.
    const outside = uniqueName('acl-outside');
    expect(await kindsOfFailure(() => admin.createTopics({ topics: [{ topic: outside }] }))).toContain(
      'TOPIC_AUTHORIZATION_FAILED',
    );
    const onTarget = await connectedAdmin(bedKafkaClient(bed, 'target', KAFKA_USER));
    expect(await kindsOfFailure(() => onTarget.createTopics({ topics: [{ topic }] }))).toContain(
      'TOPIC_AUTHORIZATION_FAILED',
    );

    // The project's own adapter logs in with the same credentials.
    const adapter = testAdapter(
      bed.source.bootstrapServers,
      'offsetsync-test',
      bedKafkaCredentials(bed, KAFKA_USER),
    );
    await adapter.connect();
    expect(await adapter.partitionCounts([topic])).toEqual(new Map([[topic, 2]]));

    // Revoked, the same request is refused again.
    await revokeAcls(bed, 'source', grants);
    expect(await kindsOfFailure(() => admin.fetchTopicMetadata({ topics: [topic] }))).toContain(
      'TOPIC_AUTHORIZATION_FAILED',
    );
  });

  it('refuses a wrong password with a SASL authentication error', async () => {
    const kafka = kafkaClient(bed.source.bootstrapServers, 'offsetsync-test', {
      ...bedKafkaCredentials(bed, KAFKA_USER),
      password: 'not-the-password',
    });
    const admin = kafka.admin();
    onTestFinished(() => admin.disconnect());
    expect(await kindsOfFailure(() => admin.connect())).toContain('KafkaJSSASLAuthenticationError');
  });

  it('speaks no plaintext on any broker or controller port', async () => {
    // The probe itself finds plaintext Kafka where there is some: the suite's plaintext bed.
    expect(await kafkaAnswersApiVersions(...hostPort(plaintextBed.source.bootstrapServers))).toBe(true);
    expect(await kafkaAnswersApiVersions('127.0.0.1', plaintextBed.source.controllerPort)).toBe(true);

    for (const cluster of [bed.source, bed.target]) {
      expect(cluster.securityProtocol).toBe('SASL_SSL');
      const [host, port] = hostPort(cluster.bootstrapServers);
      for (const listenerPort of [port, cluster.controllerPort]) {
        expect(
          await kafkaAnswersApiVersions(host, listenerPort),
          `plaintext on ${host}:${listenerPort}`,
        ).toBe(false);
        const plaintext = new Kafka({
          clientId: 'offsetsync-test-plaintext',
          brokers: [`${host}:${listenerPort}`],
          logLevel: logLevel.NOTHING,
          retry: { retries: 0 },
          connectionTimeout: 2000,
          requestTimeout: 3000,
        }).admin();
        onTestFinished(() => plaintext.disconnect());
        await expect(plaintext.connect()).rejects.toThrow();
      }
    }
  });

  it('admits to the controller port only a TLS client with a certificate from the bed CA', async () => {
    const ca = readFileSync(security.caFile);
    const withCertificate = {
      ca,
      cert: readFileSync(security.serverCertificate.certFile),
      key: readFileSync(security.serverCertificate.keyFile),
    };
    expect(await kafkaAnswersApiVersions('127.0.0.1', bed.source.controllerPort, withCertificate)).toBe(true);
    expect(await kafkaAnswersApiVersions('127.0.0.1', bed.source.controllerPort, { ca })).toBe(false);
  });

  it('lets the test replicator copy a topic when given a login', async () => {
    const topic = uniqueName('secure-copy');
    const admin = await connectedAdmin(bedKafkaClient(bed, 'source', security.kafkaAdmin.username));
    await admin.createTopics({ topics: [{ topic }], waitForLeaders: true });
    const producer = bedKafkaClient(bed, 'source', security.kafkaAdmin.username).producer();
    await producer.connect();
    onTestFinished(() => producer.disconnect());
    await producer.send({ topic, messages: [{ value: 'one' }, { value: 'two' }] });

    const login = bedKafkaCredentials(bed, security.kafkaAdmin.username);
    const replicator = await startReplicator({
      source: { ...bed.source, security: login },
      target: { ...bed.target, security: login },
      topic,
    });
    await replicator.waitUntilCaughtUp(30_000);
    expect(replicator.copies(0).map((copy) => copy.targetOffset)).toEqual([0, 1]);
  });
});

describe('secured test bed: NATS', () => {
  it('refuses a plaintext client', async () => {
    // The probe itself gets a PONG from a plaintext server: the suite's plaintext bed.
    expect(await natsPlaintextPing('127.0.0.1', plaintextBed.nats.port, undefined)).toBe('PONG');
    const login = { user: security.natsAdmin.user, pass: security.natsAdmin.password };
    expect(await natsPlaintextPing('127.0.0.1', bed.nats.port, login)).not.toBe('PONG');
  });

  it('refuses a TLS client without credentials or with a wrong password', async () => {
    for (const credentials of [{}, { user: NATS_PUBLISHER, pass: 'not-the-password' }]) {
      const attempt = connect({
        servers: bed.nats.url,
        tls: { caFile: security.caFile },
        reconnect: false,
        ...credentials,
      });
      await expect(attempt).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
    }
  });

  it('lets a user publish on its subjects and refuses it any other', async () => {
    const admin = await natsAs(security.natsAdmin.user, security.natsAdmin.password);
    const allowed = admin.subscribe('allowed.greeting', { max: 1 });
    const denied = admin.subscribe('denied.greeting');
    await admin.flush();

    const password = security.natsUsers[NATS_PUBLISHER] ?? '';
    const publisher = await natsAs(NATS_PUBLISHER, password);
    const violations = (async () => {
      for await (const status of publisher.status()) {
        if (status.type === Events.Error && status.data === 'PERMISSIONS_VIOLATION') return status;
      }
      return undefined;
    })();
    publisher.publish('allowed.greeting', sc.encode('hello'));
    publisher.publish('denied.greeting', sc.encode('hello'));
    await publisher.flush();

    for await (const message of allowed) expect(sc.decode(message.data)).toBe('hello');
    const violation = await withDeadline(violations, 10_000, 'the permissions violation');
    expect(violation?.permissionContext).toMatchObject({ operation: 'publish', subject: 'denied.greeting' });
    await admin.flush();
    expect(denied.getReceived()).toBe(0);
  });

  it('lets the admin create a JetStream stream, and a user without JetStream permissions not', async () => {
    const admin = await natsAs(security.natsAdmin.user, security.natsAdmin.password);
    const jsm = await admin.jetstreamManager();
    const name = uniqueName('SECURE').replaceAll('-', '_');
    const stream = await jsm.streams.add({ name, subjects: [`${name}.>`] });
    onTestFinished(() => jsm.streams.delete(name).then(() => undefined));
    expect(stream.config.name).toBe(name);

    const publisher = await natsAs(NATS_PUBLISHER, security.natsUsers[NATS_PUBLISHER] ?? '');
    const refused = await publisher.jetstreamManager({ timeout: 2000 }).then(
      () => undefined,
      (error: unknown) => error as NatsError,
    );
    expect(refused?.code).toMatch(/PERMISSIONS_VIOLATION|TIMEOUT/);
  });
});

describe('secured test bed: NATS restart', () => {
  it('restarts nats-server in place with its store, TLS and users', async () => {
    const before = await natsAs(security.natsAdmin.user, security.natsAdmin.password);
    const jsm = await before.jetstreamManager();
    const name = uniqueName('RESTART').replaceAll('-', '_');
    await jsm.streams.add({ name, subjects: [`${name}.>`] });
    await before.close();

    await stopProcess(bed.nats.pid);
    // Kept in the module's bed, so afterAll stops the new process.
    bed = { ...bed, nats: await restartTestbedNats(bed) };

    const after = await natsAs(security.natsAdmin.user, security.natsAdmin.password);
    expect((await (await after.jetstreamManager()).streams.info(name)).config.name).toBe(name);
    expect(await natsPlaintextPing('127.0.0.1', bed.nats.port, undefined)).not.toBe('PONG');
    await expect(
      connect({ servers: bed.nats.url, tls: { caFile: security.caFile }, reconnect: false }),
    ).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
  });
});

describe('secured test bed: material', () => {
  it('refuses options it cannot set up before starting anything', async () => {
    const refusal = await startTestbed({
      secure: {
        kafkaUsers: { admin: 'x', 'bad name': 'y' },
        natsUsers: [{ user: 'n', password: 'has space' }],
      },
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(TestbedError);
    expect(refusal).toMatchObject({ code: 'INVALID_OPTIONS' });
    expect(String(refusal)).toMatch(/admin.*bad name.*NATS user n/s);
  });

  it('admits a certificate issued later from the bed CA to the controller port, and none from another CA', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'offsetsync-secure-certs-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const client = async (ca: typeof security.ca, name: string) => {
      const issued = await issueCertificate(ca, { name, dir, serverAuth: false, clientAuth: true });
      return { cert: readFileSync(issued.certFile), key: readFileSync(issued.keyFile) };
    };
    const trust = { ca: readFileSync(security.caFile) };
    const fromBed = await client(security.ca, 'later-client');
    const stranger = await client(await createCertificateAuthority(join(dir, 'other-ca')), 'stranger');
    expect(
      await kafkaAnswersApiVersions('127.0.0.1', bed.source.controllerPort, { ...trust, ...fromBed }),
    ).toBe(true);
    expect(
      await kafkaAnswersApiVersions('127.0.0.1', bed.source.controllerPort, { ...trust, ...stranger }),
    ).toBe(false);
  });

  it('gives services a configuration that logs in with password files', () => {
    const config = secureTestConfig(bed, {}, { kafkaUser: KAFKA_USER, natsUser: NATS_PUBLISHER });
    const loaded = loadConfig({ env: {}, overrides: config });
    expect(loaded.clusters.source?.sasl).toMatchObject({
      mechanism: 'scram-sha-512',
      username: KAFKA_USER,
      passwordFile: security.kafkaPasswordFiles[KAFKA_USER],
    });
    expect(loaded.clusters.target?.tls).toMatchObject({ enabled: true, caFile: security.caFile });
    expect(loaded.nats).toMatchObject({
      servers: [bed.nats.url],
      tls: { caFile: security.caFile },
      user: NATS_PUBLISHER,
      passwordFile: security.natsPasswordFiles[NATS_PUBLISHER],
    });
  });

  it('writes each password to its file without a newline and issues an expired certificate', () => {
    expect(readFileSync(security.kafkaAdmin.passwordFile, 'utf8')).toBe(security.kafkaAdmin.password);
    const alice = security.kafkaPasswordFiles[KAFKA_USER] ?? '';
    expect(readFileSync(alice, 'utf8')).toBe(security.kafkaUsers[KAFKA_USER]);
    const publisher = security.natsPasswordFiles[NATS_PUBLISHER] ?? '';
    expect(readFileSync(publisher, 'utf8')).toBe(security.natsUsers[NATS_PUBLISHER]);

    const server = new X509Certificate(readFileSync(security.serverCertificate.certFile));
    expect(server.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(server.checkHost('localhost')).toBe('localhost');
    const expired = new X509Certificate(readFileSync(security.expiredServerCertificate.certFile));
    expect(new Date(expired.validTo).getTime()).toBeLessThan(Date.now());
    expect(expired.verify(new X509Certificate(readFileSync(security.caFile)).publicKey)).toBe(true);
  });
});
