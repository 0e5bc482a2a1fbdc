import { hostname } from 'node:os';
import { z } from 'zod';
import { durationMs } from './duration.js';
import { compileFilterPattern } from './filter-pattern.js';

/**
 * The configuration schema. This one definition is both the TypeScript type ({@link OffsetSyncConfig}) and
 * the runtime check; `describeConfigSchema()` derives the configuration reference and the environment
 * variable names from it, so the descriptions given to {@link doc} are user documentation.
 */

/** Metadata attached to configuration fields (kept in zod's global registry). */
export interface ConfigFieldMeta {
  /** One or two sentences for the configuration reference. */
  description: string;
  /** The value is a credential: redacted by `redactConfig()` and in the configuration reference. */
  secret?: boolean;
  /** How the default is shown when it is computed at load time (for example `<hostname>-<pid>`). */
  defaultText?: string;
}

function doc<T extends z.ZodType>(schema: T, meta: ConfigFieldMeta): T {
  return schema.meta({ ...meta });
}

/** A cluster alias: how links and sections refer to a cluster. */
const CLUSTER_ALIAS_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;

const clusterAlias = z.string().regex(CLUSTER_ALIAS_PATTERN, {
  error: `must be a cluster alias matching ${String(CLUSTER_ALIAS_PATTERN)}`,
});

const hostPort = z.string().refine(isHostPort, { error: 'must be host:port with a port from 1 to 65535' });

function isHostPort(value: string): boolean {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]]+):(\d{1,5})$/.exec(value);
  if (match === null) return false;
  const port = Number(match[2]);
  return port >= 1 && port <= 65535;
}

/** A filter pattern given as its source text; must compile with the flags the collector uses. */
const regexSource = z.string().superRefine((source, ctx) => {
  try {
    compileFilterPattern(source);
  } catch (e: unknown) {
    const reason = e instanceof Error ? e.message : String(e);
    ctx.addIssue({ code: 'custom', message: reason, input: source });
  }
});

const filePath = z.string().min(1, { error: 'must not be empty' });
const port = z.number().int().min(0).max(65535);

/** `committer.ackWaitMs` when unset; also what `offsetsync provision` gives a committer consumer without a committer section. */
export const COMMITTER_ACK_WAIT_DEFAULT_MS = 30_000;

interface RefinementSink {
  addIssue(issue: { code: 'custom'; message: string; path: PropertyKey[] }): void;
}

/** A secret given either inline or as a file, never both and never neither. */
function exactlyOneSecret(
  value: Record<string, unknown>,
  inline: string,
  file: string,
  ctx: RefinementSink,
): void {
  const given = [inline, file].filter((key) => value[key] !== undefined);
  if (given.length === 1) return;
  ctx.addIssue({
    code: 'custom',
    message: given.length === 0 ? `required: set ${inline} or ${file}` : `set ${inline} or ${file}, not both`,
    path: [given.length === 0 ? inline : file],
  });
}

/** One way to authenticate to NATS at most, each complete. */
function checkNatsAuthentication(nats: Record<string, unknown>, ctx: RefinementSink): void {
  const report = (path: string, message: string) => ctx.addIssue({ code: 'custom', message, path: [path] });
  if (nats.password !== undefined && nats.passwordFile !== undefined) {
    report('passwordFile', 'set password or passwordFile, not both');
  }
  if (nats.token !== undefined && nats.tokenFile !== undefined) {
    report('tokenFile', 'set token or tokenFile, not both');
  }
  const hasPassword = nats.password !== undefined || nats.passwordFile !== undefined;
  if (nats.user === undefined && hasPassword) report('user', 'required with a password');
  if (nats.user !== undefined && !hasPassword)
    report('passwordFile', 'required with user: set password or passwordFile');
  const methods = [
    nats.user !== undefined ? 'user' : undefined,
    nats.token !== undefined || nats.tokenFile !== undefined ? 'token' : undefined,
    nats.nkeySeedFile !== undefined ? 'nkeySeedFile' : undefined,
    nats.credsFile !== undefined ? 'credsFile' : undefined,
  ].filter((method) => method !== undefined);
  if (methods.length > 1) {
    report(methods[1] as string, `choose one way to authenticate, not ${methods.join(' and ')}`);
  }
}

const positiveInt = z.number().int().positive();

const tlsSchema = z
  .object({
    /** Whether to connect with TLS. Default: `false`. */
    enabled: doc(z.boolean().default(false), { description: 'Connect with TLS.' }),
    /** PEM file of the certificate authorities to trust. Default: the system trust store. */
    caFile: doc(filePath.optional(), {
      description: 'PEM file of CA certificates to trust instead of the system store.',
    }),
    /** PEM client certificate for mutual TLS. Default: none. */
    certFile: doc(filePath.optional(), { description: 'PEM client certificate (mutual TLS).' }),
    /** PEM private key of the client certificate. Default: none. */
    keyFile: doc(filePath.optional(), { description: 'PEM private key of the client certificate.' }),
    /** Whether to verify the broker certificates. Default: `true`. */
    rejectUnauthorized: doc(z.boolean().default(true), {
      description: 'Verify broker certificates. Turn off only for tests.',
    }),
  })
  .strict();

const saslSchema = z
  .object({
    /** SASL mechanism. Required when `sasl` is set. */
    mechanism: doc(z.enum(['plain', 'scram-sha-256', 'scram-sha-512']), { description: 'SASL mechanism.' }),
    /** SASL user name. Required when `sasl` is set. */
    username: doc(z.string().min(1), { description: 'SASL user name.' }),
    /** SASL password (secret). One of `password` and `passwordFile` is required. */
    password: doc(z.string().optional(), {
      description: 'SASL password; or set passwordFile.',
      secret: true,
    }),
    /**
     * File holding the SASL password (a mounted Secret). Read again for every new broker connection, so a
     * rotated password is used without a restart. One of `password` and `passwordFile` is required.
     */
    passwordFile: doc(filePath.optional(), {
      description:
        'File holding the SASL password (for example a mounted Kubernetes Secret); read again for every new broker connection, so a corrected or rotated password needs no restart.',
    }),
  })
  .strict()
  .superRefine((sasl, ctx) => exactlyOneSecret(sasl, 'password', 'passwordFile', ctx));

/** How to reach one Kafka cluster. */
const kafkaClusterSchema = z
  .object({
    /** Bootstrap brokers as `host:port`. Required, at least one. */
    bootstrapServers: doc(z.array(hostPort).min(1, { error: 'must list at least one broker' }), {
      description: 'Bootstrap brokers as host:port (comma-separated in the environment).',
    }),
    /** Kafka client id sent to the brokers. Default: unset (the service chooses one). */
    clientId: doc(z.string().min(1).optional(), {
      description: 'Kafka client id sent to the brokers; when unset the service chooses one.',
    }),
    /** TLS settings. Default: plain TCP. */
    tls: tlsSchema.optional(),
    /** SASL authentication. Default: none. */
    sasl: saslSchema.optional(),
    /** Timeout of establishing a broker connection. Default: `10s`. */
    connectionTimeoutMs: doc(durationMs({ min: 1 }).default(10_000), {
      description: 'Timeout of establishing a broker connection.',
    }),
    /** Timeout of one Kafka request. Default: `30s`. */
    requestTimeoutMs: doc(durationMs({ min: 1 }).default(30_000), {
      description: 'Timeout of one Kafka request.',
    }),
  })
  .strict();

/** A per-link include/exclude filter: by default everything the collector passes on goes along the link. */
const linkFilterSchema = (what: string) =>
  z
    .object({
      include: doc(z.array(regexSource).default(['.*']), {
        description: `Regular expressions (JavaScript syntax, unanchored); ${what} matching one of them go along the link.`,
      }),
      exclude: doc(z.array(regexSource).default([]), {
        description: `Regular expressions; ${what} matching one of them never go along the link, even if included.`,
      }),
    })
    .strict();

/** A legal Kafka topic name. */
export const TOPIC_NAME_PATTERN = /^[A-Za-z0-9._-]{1,249}$/;
const topicName = z.string().regex(TOPIC_NAME_PATTERN, {
  error: 'must be a Kafka topic name: 1 to 249 of letters, digits, ".", "_" and "-"',
});

/** How a link's replicator names the source's topics on the target. */
const topicNamesSchema = z
  .object({
    /**
     * `identity`: the same name (MirrorMaker 2's IdentityReplicationPolicy); `mirrormaker2`: MirrorMaker 2's
     * default policy, `<sourceAlias><separator><topic>`; `map`: the names in `map`, and only those topics.
     * Default: `identity`.
     */
    policy: doc(z.enum(['identity', 'mirrormaker2', 'map']).default('identity'), {
      description:
        "How the replicator names the source's topics on the target: identity, mirrormaker2 (`<sourceAlias><separator><topic>`) or map.",
    }),
    /** `mirrormaker2` only: MirrorMaker 2's `replication.policy.separator`. Default: `.`. */
    separator: doc(
      z
        .string()
        .regex(/^[A-Za-z0-9._-]{1,32}$/, { error: 'must be 1 to 32 of letters, digits, ".", "_" and "-"' })
        .optional(),
      { description: "mirrormaker2 only: MirrorMaker 2's replication.policy.separator; `.` when unset." },
    ),
    /** `mirrormaker2` only: the source cluster's alias in MirrorMaker 2's configuration. Default: the link's source. */
    sourceAlias: doc(
      z
        .string()
        .regex(/^[A-Za-z0-9._-]{1,64}$/, { error: 'must be 1 to 64 of letters, digits, ".", "_" and "-"' })
        .optional(),
      {
        description:
          "mirrormaker2 only: the source cluster's alias in MirrorMaker 2's configuration; the link's source when unset.",
      },
    ),
    /** `map` only: source topic -> target topic. A topic not listed is not replicated by the link. */
    map: z
      .record(
        topicName.meta({ placeholder: '<topic>' }),
        doc(topicName, {
          description:
            'map only: the name on the target of the source topic given as the key; a topic not listed is not replicated by the link.',
        }),
      )
      .optional(),
  })
  .strict()
  .superRefine((value, ctx) => {
    const misplaced = (field: 'separator' | 'sourceAlias' | 'map', policy: string) =>
      ctx.addIssue({
        code: 'custom',
        message: `only for policy ${policy} (policy is ${value.policy})`,
        path: [field],
      });
    if (value.policy !== 'mirrormaker2') {
      if (value.separator !== undefined) misplaced('separator', 'mirrormaker2');
      if (value.sourceAlias !== undefined) misplaced('sourceAlias', 'mirrormaker2');
    }
    if (value.policy === 'map') {
      if (value.map === undefined || Object.keys(value.map).length === 0)
        ctx.addIssue({
          code: 'custom',
          message: 'policy map needs a map of at least one topic',
          path: ['map'],
        });
    } else if (value.map !== undefined) misplaced('map', 'map');
  });

/** A link's topic names (config `links[].topicNames`). */
export type TopicNames = z.infer<typeof topicNamesSchema>;

/** The modes of a link: commit on the target, or only observe (shadow mode). */
export const LINK_MODES = ['commit', 'observe'] as const;

const linkSchema = z
  .object({
    /** Alias of the cluster offsets are read from. */
    source: doc(clusterAlias, { description: 'Alias of the cluster whose committed offsets are read.' }),
    /** Alias of the cluster offsets are committed to. */
    target: doc(clusterAlias, {
      description: 'Alias of the cluster the translated offsets are committed to.',
    }),
    /** How the link's replicator names topics on the target. Default (unset): the same names. */
    topicNames: topicNamesSchema.optional(),
    /** Which consumer groups go along this link, of those the collector passes on. Default: all. */
    groups: linkFilterSchema('consumer groups').optional(),
    /** Which topics go along this link, of those the collector passes on. Default: all. */
    topics: linkFilterSchema('topics').optional(),
    /**
     * `commit` commits the translated offsets on the target; `observe` (shadow mode) translates and decides
     * everything as usual, reports what it would commit, and commits nothing. Default: `commit`.
     */
    mode: doc(z.enum(LINK_MODES).default('commit'), {
      description:
        'commit: commit translated offsets on the target. observe (shadow mode): decide as usual and report what would be committed, commit nothing; switching back to commit applies the current state.',
    }),
  })
  .strict();

/** What a link does on its target (config `links[].mode`). */
export type LinkMode = (typeof LINK_MODES)[number];

const subjectToken = z
  .string()
  .regex(/^[A-Za-z0-9_-]+$/, { error: 'must be one NATS subject token: letters, digits, "_" and "-" only' });

const natsSchema = z
  .object({
    /** NATS server URLs. Default: `['nats://127.0.0.1:4222']`. */
    servers: doc(
      z
        .array(z.string().regex(/^\S+$/, { error: 'must be a server URL without spaces' }))
        .min(1, { error: 'must list at least one server' })
        .default(['nats://127.0.0.1:4222']),
      { description: 'NATS server URLs (comma-separated in the environment).' },
    ),
    /** Connection name shown in server monitoring. Default: unset (the service chooses one). */
    name: doc(z.string().min(1).optional(), {
      description: 'Connection name shown in server monitoring; when unset the service chooses one.',
    }),
    /** User for user/password authentication. Default: none. */
    user: doc(z.string().min(1).optional(), { description: 'User for user/password authentication.' }),
    /** Password for user/password authentication (secret). Default: none. */
    password: doc(z.string().optional(), {
      description: 'Password for user/password authentication; or set passwordFile.',
      secret: true,
    }),
    /** File holding the password, read again on every reconnect. Default: none. */
    passwordFile: doc(filePath.optional(), {
      description:
        'File holding the NATS password (a mounted Secret); read again on every reconnect, so a rotated password needs no restart.',
    }),
    /** Token authentication (secret). Default: none. */
    token: doc(z.string().optional(), { description: 'Token for token authentication.', secret: true }),
    /** File holding the token, read again on every reconnect. Default: none. */
    tokenFile: doc(filePath.optional(), {
      description: 'File holding the NATS token; read again on every reconnect.',
    }),
    /** NKey seed file (`SU...`) for nkey authentication. Default: none. */
    nkeySeedFile: doc(filePath.optional(), {
      description:
        'File holding an NKey user seed (SU...) for nkey authentication; read again on every reconnect.',
    }),
    /** Credentials file (JWT + NKey). Default: none. */
    credsFile: doc(filePath.optional(), { description: 'Credentials file (JWT and NKey seed).' }),
    /**
     * TLS to the NATS servers. When set, the connection must be TLS (a server that does not offer it is
     * refused, never used in plaintext). Default: unset, which allows plaintext.
     */
    tls: z
      .object({
        /** PEM CA certificates to verify the servers with. Default: the system trust store. */
        caFile: doc(filePath.optional(), {
          description: 'PEM CA certificates to verify the NATS servers with, instead of the system store.',
        }),
        /** PEM client certificate for mutual TLS (with keyFile). Default: none. */
        certFile: doc(filePath.optional(), { description: 'PEM client certificate (mutual TLS).' }),
        /** PEM private key of the client certificate. Default: none. */
        keyFile: doc(filePath.optional(), { description: 'PEM private key of the client certificate.' }),
      })
      .strict()
      .superRefine((tls, ctx) => {
        if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) {
          ctx.addIssue({
            code: 'custom',
            message: 'certFile and keyFile go together: set both or neither',
            path: [tls.certFile === undefined ? 'certFile' : 'keyFile'],
          });
        }
      })
      .optional(),
    /**
     * Whether a service creates the streams, KV bucket and durable consumers it needs when they are
     * missing (`create`, which needs JetStream admin rights), or only checks that `offsetsync provision`
     * made them (`verify`: read-only rights suffice). Default: `create`.
     */
    provisioning: doc(z.enum(['create', 'verify']).default('create'), {
      description:
        'create: a service creates the streams, KV bucket and consumers it needs when missing (needs JetStream admin rights); verify: it only checks that `offsetsync provision` made them, so its NATS user needs no admin right (docs/security.md).',
    }),
    /** Replicas of the JetStream streams and KV buckets offsetsync creates. Default: `1`. */
    streamReplicas: doc(z.literal([1, 3]).default(1), {
      description: 'Replicas of the streams and KV buckets offsetsync creates (1 or 3).',
    }),
    /** First token of every subject (and the base of stream names). Default: `osync`. */
    subjectPrefix: doc(subjectToken.default('osync'), {
      description: 'First token of every offsetsync subject; separates deployments sharing a NATS system.',
    }),
    /** Timeout of the initial connection. Default: `5s`. */
    connectTimeoutMs: doc(durationMs({ min: 1 }).default(5_000), {
      description: 'Timeout of the initial connection.',
    }),
    /** Wait between reconnect attempts. Default: `1s`. */
    reconnectWaitMs: doc(durationMs().default(1_000), { description: 'Wait between reconnect attempts.' }),
  })
  .strict()
  .superRefine((nats, ctx) => checkNatsAuthentication(nats, ctx));

const includeExcludeFields = (include: string[], exclude: string[], what: string) =>
  z
    .object({
      /** Regular expressions; an item is selected when one matches. */
      include: doc(z.array(regexSource).default(include), {
        description: `Regular expressions (JavaScript syntax, unanchored); ${what} matching one of them are selected.`,
      }),
      /** Regular expressions; a selected item is dropped when one matches. */
      exclude: doc(z.array(regexSource).default(exclude), {
        description: `Regular expressions; ${what} matching one of them are dropped even if included.`,
      }),
    })
    .strict()
    .prefault({});

const collectorSchema = z
  .object({
    /** Alias of the source cluster whose offsets topic is read. Required. */
    cluster: doc(clusterAlias, {
      description: 'Alias of the source cluster whose offsets topic this collector reads.',
    }),
    /** Topic holding committed offsets. Default: `__consumer_offsets`. */
    offsetsTopic: doc(z.string().min(1).default('__consumer_offsets'), {
      description: 'Topic holding committed offsets; another topic in the same format may be set for tests.',
    }),
    /** Kafka consumer group the collector instances share. Default: `offsetsync-collector-<cluster>`. */
    consumerGroup: doc(z.string().min(1).optional(), {
      description: 'Consumer group shared by the collector instances of this source.',
      defaultText: 'offsetsync-collector-<cluster>',
    }),
    /** Which consumer groups are synchronised. Default: include `.*`, exclude `^offsetsync-`. */
    groups: includeExcludeFields(['.*'], ['^offsetsync-'], 'consumer groups'),
    /** Which topics are synchronised. Default: include `.*`, exclude `^__`. */
    topics: includeExcludeFields(['.*'], ['^__'], 'topics'),
    /** The offsets-topic fetch max wait (reads return as soon as records arrive). Default: `100ms`, at most `5s`. */
    fetchMaxWaitMs: doc(durationMs({ max: 5_000 }).default(100), {
      description:
        'Longest wait of a read of the offsets topic for new records (the fetch max wait; at most 5s). A read returns as soon as records arrive, so this sets how often an idle collector asks; commits that arrive in one read are coalesced per group/topic/partition. Was coalesceWindowMs.',
    }),
    /**
     * How long the group coordinator waits for a silent collector instance before handing its partitions
     * to the others (kill -9, network loss). Default: `30s`; the broker accepts 6s to 30min by default.
     */
    sessionTimeoutMs: doc(durationMs({ min: 1_000 }).default(30_000), {
      description:
        'How long a silent collector instance keeps its offsets-topic partitions before the others take them over.',
    }),
    /** Events published to JetStream at once, awaiting their acknowledgements together. Default: `500`. */
    publishConcurrency: doc(positiveInt.default(500), {
      description:
        'Events of a batch published to JetStream at once (in flight, awaiting acknowledgement). Was publishBatchSize.',
    }),
    /** Entries of the anchor lookup cache. Default: `100000`. */
    anchorCacheSize: doc(positiveInt.default(100_000), {
      description: 'Entries of the anchor lookup cache.',
    }),
    /**
     * Source records on each side of a committed offset checked for identical records (same timestamp,
     * key and value). Translators recognise a replicator's rewrite of a run only within this distance.
     * Default: `400` (twice the translator's default duplicate window); at most `100000`; `0` turns the
     * check off.
     */
    distinctCheckRecords: doc(z.number().int().min(0).max(100_000).default(400), {
      description:
        'Source records on each side of a committed offset checked for identical records (same timestamp, key and value). Translators recognise a run a replicator wrote twice only within this distance; 0 turns the check off (such translations are then INEXACT).',
    }),
  })
  .strict()
  .transform((collector) => ({
    ...collector,
    consumerGroup: collector.consumerGroup ?? `offsetsync-collector-${collector.cluster}`,
  }));

const translatorSchema = z
  .object({
    /** Alias of the target cluster this translator serves. Required. */
    target: doc(clusterAlias, {
      description: 'Alias of the target cluster this translator translates offsets for.',
    }),
    /** Offsets on each side of where a timestamp bisection lands that a guided scan starts from. Default: `16`. */
    probeWindow: doc(z.number().int().min(0).default(16), {
      description:
        'Offsets before the point a timestamp bisection lands on that the scan for a not-yet-replicated record starts from.',
    }),
    /**
     * Records read after the first copy of an anchor for later copies (runs an at-least-once replicator
     * wrote twice), and before the search's floor to recognise a rewrite of consumed records. Default:
     * `200`; at most `100000`.
     */
    duplicateWindow: doc(z.number().int().min(0).max(100_000).default(200), {
      description:
        'Records read after the first copy of an anchor for later copies (duplicated runs), and before the floor to recognise them. A run written twice further apart than this is not seen.',
    }),
    /** Records scanned forward from the timestamp lookup before giving up on an exact match. Default: `5000`. */
    scanLimit: doc(positiveInt.default(5_000), {
      description:
        'Records scanned forward from the timestamp lookup before falling back to an inexact offset.',
    }),
    /** First retry delay of a pending translation. Default: `200ms`. */
    pendingRetryMinMs: doc(durationMs({ min: 1 }).default(200), {
      description: 'First retry delay of a translation whose record has not arrived on the target.',
    }),
    /** Longest retry delay of a pending translation. Default: `10s`. */
    pendingRetryMaxMs: doc(durationMs({ min: 1 }).default(10_000), {
      description: 'Longest retry delay of a pending translation (backoff cap).',
    }),
    /** After how long a pending translation falls back to an inexact offset; 0 = never. Default: `0`. */
    pendingFallbackAfterMs: doc(durationMs().default(0), {
      description:
        'After how long a pending translation commits the inexact timestamp offset; 0 never falls back.',
    }),
    /**
     * How long a translation made while the target's records after it did not yet fill the duplicate
     * window is watched: when the replicator writes more copies of consumed records after it and the group
     * has not committed again, the translation is revised forward. 0 never revises. Default: `10m`.
     */
    revisionWindowMs: doc(durationMs().default(600_000), {
      description:
        'How long a translation is revised forward when the replicator writes more copies of consumed records after it (0 never).',
    }),
    /** How often watched translations are looked at again (when their target partition grew). Default: `1s`. */
    revisionIntervalMs: doc(durationMs({ min: 100 }).default(1_000), {
      description:
        'How often translations within translator.revisionWindowMs are checked again, when their target partition grew.',
    }),
    /** Entries of the translation cache. Default: `100000`. */
    cacheSize: doc(positiveInt.default(100_000), { description: 'Entries of the translation cache.' }),
    /**
     * Bytes of target records kept between translations, so that commits of one partition do not each
     * read and decode the same records again (checked against the target before use). Default: `67108864`
     * (64 MiB); `0` keeps none.
     */
    recordCacheBytes: doc(
      z
        .number()
        .int()
        .min(0)
        .default(64 * 1024 * 1024),
      {
        description:
          'Bytes of target records kept between translations (checked against the target before use); 0 keeps none.',
      },
    ),
  })
  .strict();

const committerSchema = z
  .object({
    /** Alias of the target cluster this committer commits to. Required. */
    target: doc(clusterAlias, { description: 'Alias of the target cluster this committer commits to.' }),
    /** Wait before retrying a group that was active on the target. Default: `30s`. */
    activeGroupRetryMs: doc(durationMs({ min: 1 }).default(30_000), {
      description: 'Wait before retrying a group the target refused because it has live members.',
    }),
    /**
     * Connections to each target broker over which the group requests (OffsetFetch, OffsetCommit) are
     * spread, a group always on the same one. Default: `32`.
     */
    groupConnections: doc(z.number().int().min(1).max(64).default(32), {
      description:
        'Connections to each target broker for group requests (a broker handles one request per connection at a time).',
    }),
    /** Most translated events handled (and committed per group) in one batch. Default: `500`. */
    maxBatch: doc(positiveInt.default(500), {
      description: 'Most translated events handled in one batch; their commits are sent once per group.',
    }),
    /**
     * How long JetStream waits for a committer to settle an event before handing it to another instance
     * (after a crash). Default: `30s`.
     */
    ackWaitMs: doc(durationMs({ min: 1_000 }).default(COMMITTER_ACK_WAIT_DEFAULT_MS), {
      description:
        'How long an event handed to a committer instance stays unsettled before JetStream redelivers it (crash recovery).',
    }),
    /** First delay before an event whose commit failed transiently is tried again. Default: `1s`. */
    retryBackoffMinMs: doc(durationMs({ min: 1 }).default(1_000), {
      description:
        'First delay before an event is retried after a transient failure (target unreachable, coordinator moving).',
    }),
    /** Longest delay between retries of an event (the backoff doubles up to it). Default: `30s`. */
    retryBackoffMaxMs: doc(durationMs({ min: 1 }).default(30_000), {
      description: 'Longest delay between retries of an event after transient failures (backoff cap).',
    }),
  })
  .strict();

const healthSchema = z
  .object({
    /** gRPC server of the health service. Default: plaintext on 0.0.0.0:50051. */
    grpc: z
      .object({
        /** Address the gRPC server binds. Default: `0.0.0.0`. */
        host: doc(z.string().min(1).default('0.0.0.0'), { description: 'Address the gRPC server binds.' }),
        /** Port of the gRPC server. Default: `50051`. */
        port: doc(port.default(50051), { description: 'Port of the gRPC server (0 picks a free port).' }),
        /** Whether to serve gRPC server reflection (grpcurl lists the services). Default: `true`. */
        reflection: doc(z.boolean().default(true), {
          description:
            'Serve gRPC server reflection, so that grpcurl can list and call the API without .proto files; turn off to publish nothing about the API.',
        }),
        /** TLS of the gRPC server. Default: plaintext. */
        tls: z
          .object({
            /** PEM server certificate. Required when `tls` is set. */
            certFile: doc(filePath, { description: 'PEM server certificate.' }),
            /** PEM private key. Required when `tls` is set. */
            keyFile: doc(filePath, { description: 'PEM private key of the server certificate.' }),
            /** PEM CA certificates for verifying clients; set to require client certificates. Default: none. */
            caFile: doc(filePath.optional(), {
              description:
                'PEM CA certificates; when set, clients must present a certificate signed by them.',
            }),
          })
          .strict()
          .optional(),
      })
      .strict()
      .prefault({}),
    /** A link whose events stopped flowing for this long is STALLED. Default: `30s`. */
    stalledAfterMs: doc(durationMs({ min: 1 }).default(30_000), {
      description: 'A link with pending work and no events for this long is reported STALLED.',
    }),
    /** A link whose end-to-end lag exceeds this is LAGGING. Default: `5s`. */
    laggingAboveMs: doc(durationMs({ min: 1 }).default(5_000), {
      description: 'A link whose end-to-end lag exceeds this is reported LAGGING.',
    }),
    /** An instance is missing after this many heartbeat intervals without a heartbeat. Default: `3`. */
    missingAfterHeartbeats: doc(positiveInt.default(3), {
      description: 'Heartbeat intervals without a heartbeat after which an instance counts as gone.',
    }),
    /**
     * How long a link that is not in the config (learnt from heartbeats and events) is still reported
     * after the last heartbeat of a translator or committer serving it. Default: `10m`.
     */
    forgetLinkAfterMs: doc(durationMs({ min: 1 }).default(600_000), {
      description:
        'How long a link that is not in the config is still reported (DOWN) after its last translator or committer went quiet; then it disappears.',
    }),
    /**
     * How long a group (or a group's partition) whose offsets were deleted on the source is still shown,
     * as DELETED, before health forgets it, unless it committed again. Keeps health's memory bounded as
     * groups come and go. Default: `1h`.
     */
    forgetDeletedGroupAfterMs: doc(durationMs({ min: 1 }).default(3_600_000), {
      description:
        'How long a group or partition deleted on the source is shown (DELETED) before health forgets it, unless it committed again since.',
    }),
    /**
     * How often the health service reads its config file and environment again for the links; 0 never.
     * Default: `10s`.
     */
    configReloadIntervalMs: doc(durationMs().default(10_000), {
      description:
        'How often health reads its config again for the links (a link removed there stops being pinned; other settings need a restart); 0 never.',
    }),
  })
  .strict();

/** The offsetsync configuration schema; parse with `loadConfig()` rather than directly. */
export const OffsetSyncConfigSchema = z
  .object({
    /** Identity of this process. Default: id `<hostname>-<pid>`, no version. */
    instance: z
      .object({
        /** Identity of this process in heartbeats, logs and telemetry. Default: `<hostname>-<pid>`. */
        id: doc(
          z
            .string()
            .min(1)
            .default(() => `${hostname()}-${process.pid}`),
          {
            description: 'Identity of this process in heartbeats, logs and telemetry.',
            defaultText: '<hostname>-<pid>',
          },
        ),
        /** Software version reported in heartbeats and telemetry. Default: unset (the service reports its build). */
        softwareVersion: doc(z.string().min(1).optional(), {
          description:
            'Software version reported in heartbeats and telemetry; when unset the service reports its own.',
        }),
      })
      .strict()
      .prefault({}),
    /** Kafka clusters by alias. Default: none. */
    clusters: z.record(clusterAlias, kafkaClusterSchema).default({}),
    /** Source -> target pairs offsets are distributed along. Default: none. */
    links: doc(z.array(linkSchema).default([]), {
      description:
        'Source -> target pairs that offsets are distributed along (JSON array in the environment).',
    }),
    /** NATS connection and JetStream settings. Default: a local server, see the fields. */
    nats: natsSchema.prefault({}),
    /** Collector settings; present where a collector runs. */
    collector: collectorSchema.optional(),
    /** Translator settings; present where a translator runs. */
    translator: translatorSchema.optional(),
    /** Committer settings; present where a committer runs. */
    committer: committerSchema.optional(),
    /** Health service settings; present where the health service runs. */
    health: healthSchema.optional(),
    /** Heartbeats every instance publishes for the health service. Default: see the fields. */
    heartbeat: z
      .object({
        /** Interval between heartbeats of every instance. Default: `2s`. */
        intervalMs: doc(durationMs({ min: 1 }).default(2_000), {
          description: 'Interval between heartbeats.',
        }),
      })
      .strict()
      .prefault({}),
    /**
     * The probe port of every service process: grpc.health.v1 Check/Watch for service "" (the process
     * itself), for Kubernetes liveness/readiness probes. Default: enabled on 0.0.0.0:8090.
     */
    probes: z
      .object({
        /** Whether to serve the probe port. Default: `true`. */
        enabled: doc(z.boolean().default(true), {
          description: 'Serve grpc.health.v1 about this process on the probe port (Kubernetes grpc probes).',
        }),
        /** Address the probe port binds. Default: `0.0.0.0`. */
        host: doc(z.string().min(1).default('0.0.0.0'), { description: 'Address the probe port binds.' }),
        /** Port of the probe server. Default: `8090`. */
        port: doc(port.default(8090), { description: 'Port of the probe server (0 picks a free port).' }),
      })
      .strict()
      .prefault({}),
    /** OpenTelemetry settings. Default: see the fields. */
    telemetry: z
      .object({
        /** OpenTelemetry `service.namespace`. Default: `offsetsync`. */
        serviceNamespace: doc(z.string().min(1).default('offsetsync'), {
          description: 'OpenTelemetry service.namespace resource attribute.',
        }),
        /** Prometheus scrape endpoint. Default: enabled on 0.0.0.0:9464. */
        prometheus: z
          .object({
            /** Whether to serve Prometheus metrics. Default: `true`. */
            enabled: doc(z.boolean().default(true), {
              description: 'Serve metrics for Prometheus to scrape.',
            }),
            /** Address the metrics endpoint binds. Default: `0.0.0.0`. */
            host: doc(z.string().min(1).default('0.0.0.0'), {
              description: 'Address the metrics endpoint binds.',
            }),
            /** Port of the metrics endpoint. Default: `9464`. */
            port: doc(port.default(9464), {
              description: 'Port of the metrics endpoint (0 picks a free port).',
            }),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    /** Log settings. Default: JSON at level info. */
    logging: z
      .object({
        /** Minimum log level. Default: `info`. */
        level: doc(z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'), {
          description: 'Minimum level of log records written.',
        }),
        /** Human-readable log lines instead of JSON lines (for reading by eye, not for collectors). Default: `false`. */
        pretty: doc(z.boolean().default(false), {
          description: 'Human-readable log lines (pino-pretty) instead of JSON lines, for reading by eye.',
        }),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  // `when` makes the cross-field checks run even when fields failed, so every problem is reported at once;
  // the value may therefore be partly invalid and is inspected defensively.
  .superRefine((config, ctx) => checkCrossFieldRules(config, ctx), { when: () => true });

/** The validated configuration every service receives. */
export type OffsetSyncConfig = z.output<typeof OffsetSyncConfigSchema>;
/** One Kafka cluster's connection settings. */
export type KafkaClusterConfig = OffsetSyncConfig['clusters'][string];
/** The collector section. */
export type CollectorConfig = NonNullable<OffsetSyncConfig['collector']>;
/** The translator section. */
export type TranslatorConfig = NonNullable<OffsetSyncConfig['translator']>;
/** The committer section. */
export type CommitterConfig = NonNullable<OffsetSyncConfig['committer']>;
/** The health section. */
export type HealthConfig = NonNullable<OffsetSyncConfig['health']>;

interface IssueSink {
  addIssue(issue: { code: 'custom'; message: string; path: PropertyKey[]; input?: unknown }): void;
}

function checkCrossFieldRules(config: unknown, ctx: IssueSink): void {
  if (!isRecord(config)) return;
  const clusters = isRecord(config.clusters) ? config.clusters : {};
  const known = (alias: unknown): boolean => typeof alias === 'string' && Object.hasOwn(clusters, alias);
  const report = (path: PropertyKey[], message: string) => ctx.addIssue({ code: 'custom', message, path });
  const unknownAlias = (alias: unknown) =>
    `unknown cluster ${JSON.stringify(alias)}: not a key of clusters (${describeKeys(clusters)})`;

  const linkTargets = new Set<string>();
  if (Array.isArray(config.links)) {
    const seen = new Map<string, number>();
    config.links.forEach((link: unknown, index) => {
      if (!isRecord(link)) return;
      const { source, target } = link;
      if (typeof source === 'string' && !known(source))
        report(['links', index, 'source'], unknownAlias(source));
      if (typeof target === 'string' && !known(target))
        report(['links', index, 'target'], unknownAlias(target));
      if (typeof target === 'string') linkTargets.add(target);
      if (typeof source !== 'string' || typeof target !== 'string') return;
      if (source === target) {
        report(['links', index], `source and target are the same cluster ${JSON.stringify(source)}`);
        return;
      }
      const key = `${source}\u0000${target}`;
      const first = seen.get(key);
      if (first === undefined) seen.set(key, index);
      else report(['links', index], `duplicate of links.${first} (${source} -> ${target})`);
    });
  }

  const collector = config.collector;
  if (isRecord(collector) && typeof collector.cluster === 'string' && !known(collector.cluster)) {
    report(['collector', 'cluster'], unknownAlias(collector.cluster));
  }

  for (const section of ['translator', 'committer'] as const) {
    const value = config[section];
    if (!isRecord(value) || typeof value.target !== 'string') continue;
    if (!known(value.target)) report([section, 'target'], unknownAlias(value.target));
    else if (!linkTargets.has(value.target)) {
      report([section, 'target'], `cluster ${JSON.stringify(value.target)} is not the target of any link`);
    }
  }

  const translator = config.translator;
  if (
    isRecord(translator) &&
    typeof translator.pendingRetryMinMs === 'number' &&
    typeof translator.pendingRetryMaxMs === 'number' &&
    translator.pendingRetryMinMs > translator.pendingRetryMaxMs
  ) {
    report(
      ['translator', 'pendingRetryMinMs'],
      `must not exceed translator.pendingRetryMaxMs (${translator.pendingRetryMinMs} ms > ${translator.pendingRetryMaxMs} ms)`,
    );
  }

  const committer = config.committer;
  if (
    isRecord(committer) &&
    typeof committer.retryBackoffMinMs === 'number' &&
    typeof committer.retryBackoffMaxMs === 'number' &&
    committer.retryBackoffMinMs > committer.retryBackoffMaxMs
  ) {
    report(
      ['committer', 'retryBackoffMinMs'],
      `must not exceed committer.retryBackoffMaxMs (${committer.retryBackoffMinMs} ms > ${committer.retryBackoffMaxMs} ms)`,
    );
  }
}

function describeKeys(record: Record<string, unknown>): string {
  const keys = Object.keys(record);
  return keys.length === 0 ? 'none defined' : keys.join(', ');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
