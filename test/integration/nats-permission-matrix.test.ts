// The NATS users offsetsync generates for a deployment are least privilege, proven on a real nats-server:
// the server runs the very authorization block `offsetsync security nats` prints (passwords from its
// environment references), and every user of a two-link deployment (onprem -> cloud, onprem -> edge) is
// probed on every offsetsync subject, publish and subscribe, against an expected table written here from
// the threat model (a stolen credential reaches its own role's and its own link's subjects only; only
// `provision` manages streams and durable consumers), never derived from natsPermissions.
//
// How a cell is decided: two independent observations that must agree. A publish is denied when the
// server answers it with a permissions violation (nats-server writes the -ERR before the PONG of the next
// PING, proven below on the raw wire, so a flush fences it) and an admin subscribed to `>` never sees the
// message; it is allowed when no violation comes and the admin does see it. A subscription is denied when
// the server refuses it and a message the admin then publishes on it never arrives; allowed otherwise.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, ErrorCode, Events, StringCodec, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Names } from '@offsetsync/contracts';
import {
  committerConsumerSpec,
  inboxPrefix,
  translatorConsumerSpec,
  type NatsRole,
} from '@offsetsync/jetstream';
import { GiveUp, isAlive, spawnDetached } from '@offsetsync/testbed';
import {
  deploymentNatsUsers,
  natsAuthorizationBlock,
  type DeploymentNatsUser,
} from '../../cli/src/security/nats-authorization.js';
import { freePort } from '../infra/free-port.js';
import { stopProcess } from '../infra/processes.js';
import { waitFor } from '../infra/wait.js';

const sc = StringCodec();

// ---- The deployment ---------------------------------------------------------------------------------

const PREFIX = 'osync';
const names = new Names(PREFIX);
const LINKS = [
  { source: 'onprem', target: 'cloud' },
  { source: 'onprem', target: 'edge' },
];
const KEY = { group: 'billing', topic: 'orders', partition: 3 };

const COLLECTOR = 'collector-onprem';
const TRANSLATOR_CLOUD = 'translator-cloud';
const TRANSLATOR_EDGE = 'translator-edge';
const COMMITTER_CLOUD = 'committer-cloud';
const COMMITTER_EDGE = 'committer-edge';
const HEALTH = 'health';
const PROVISION = 'provision';
const USERS = [
  COLLECTOR,
  TRANSLATOR_CLOUD,
  TRANSLATOR_EDGE,
  COMMITTER_CLOUD,
  COMMITTER_EDGE,
  HEALTH,
  PROVISION,
] as const;
type User = (typeof USERS)[number];

const ROLE_OF: Record<User, NatsRole> = {
  [COLLECTOR]: 'collector',
  [TRANSLATOR_CLOUD]: 'translator',
  [TRANSLATOR_EDGE]: 'translator',
  [COMMITTER_CLOUD]: 'committer',
  [COMMITTER_EDGE]: 'committer',
  [HEALTH]: 'health',
  [PROVISION]: 'provision',
};

/** The test's observer: it may do everything, so it sees every message a user manages to publish. */
const ADMIN = 'matrix-admin';

const EVERYONE: readonly User[] = USERS;
const NOBODY: readonly User[] = [];
const TRANSLATORS: readonly User[] = [TRANSLATOR_CLOUD, TRANSLATOR_EDGE];
const COMMITTERS: readonly User[] = [COMMITTER_CLOUD, COMMITTER_EDGE];

const STREAM = {
  committed: names.stream('committed'),
  translated: names.stream('translated'),
  applied: names.stream('applied'),
  heartbeats: names.stream('heartbeats'),
};
const BUCKET = names.bucket('applied-versions');
const KV_STREAM = `KV_${BUCKET}`;

/** The durable consumers provisioning creates, with the one user each belongs to. */
const DURABLES = [
  { ...translatorConsumerSpec(names, 'onprem', 'cloud'), owner: TRANSLATOR_CLOUD },
  { ...translatorConsumerSpec(names, 'onprem', 'edge'), owner: TRANSLATOR_EDGE },
  { ...committerConsumerSpec(names, 'onprem', 'cloud', 30_000), owner: COMMITTER_CLOUD },
  { ...committerConsumerSpec(names, 'onprem', 'edge', 30_000), owner: COMMITTER_EDGE },
  // A link that observes (links[].mode observe) reads with a consumer of its own, the same committer's.
  { ...committerConsumerSpec(names, 'onprem', 'cloud', 30_000, 'observe'), owner: COMMITTER_CLOUD },
] as const;

/** A consumer name as nats.js makes up for an ephemeral (ordered) consumer. */
const EPHEMERAL = 'Zk3PqEphemeralProbe01';

// ---- The expected table -----------------------------------------------------------------------------

type Operation = 'publish' | 'subscription';

interface Cell {
  operation: Operation;
  subject: string;
  /** The users that may do it; every other user must be refused. */
  allowed: readonly User[];
}

const pub = (subject: string, allowed: readonly User[]): Cell => ({ operation: 'publish', subject, allowed });
const sub = (subject: string, allowed: readonly User[]): Cell => ({
  operation: 'subscription',
  subject,
  allowed,
});

/** Event subjects: each written by the one service of its role and link. */
const DATA_CELLS: Cell[] = [
  pub(names.committed('onprem', KEY), [COLLECTOR]),
  pub(names.committedGroup('onprem', KEY.group), [COLLECTOR]),
  // A source the deployment does not have: nobody may invent its events.
  pub(names.committed('branch', KEY), NOBODY),
  pub(names.translated('onprem', 'cloud', KEY), [TRANSLATOR_CLOUD]),
  pub(names.translated('onprem', 'edge', KEY), [TRANSLATOR_EDGE]),
  pub(names.translated('branch', 'cloud', KEY), NOBODY),
  pub(names.applied('onprem', 'cloud', KEY), [COMMITTER_CLOUD]),
  pub(names.applied('onprem', 'edge', KEY), [COMMITTER_EDGE]),
  // Heartbeats: every role its own. (Instances of one role share a user per target, not per instance.)
  pub(names.heartbeat('collector', 'probe-1'), [COLLECTOR]),
  pub(names.heartbeat('translator', 'probe-1'), TRANSLATORS),
  pub(names.heartbeat('committer', 'probe-1'), COMMITTERS),
  pub(names.heartbeat('health', 'probe-1'), [HEALTH]),
  // The applied-versions bucket: each committer writes its own link's keys only.
  pub(`$KV.${BUCKET}.${names.linkKey('onprem', 'cloud', KEY)}`, [COMMITTER_CLOUD]),
  pub(`$KV.${BUCKET}.${names.linkKey('onprem', 'edge', KEY)}`, [COMMITTER_EDGE]),
  pub(`$KV.${BUCKET}.${names.linkKey('branch', 'cloud', KEY)}`, NOBODY),
];

/** Per stream: who may look it up and who may read single messages of it. */
const STREAM_READERS: { stream: string; info: readonly User[]; msgGet: readonly User[] }[] = [
  // Everyone publishes to or reads the committed stream but the health's reads are ordered consumers; the
  // committer reads a key's newest committed event when the application itself committed on the target.
  { stream: STREAM.committed, info: EVERYONE, msgGet: [...COMMITTERS, PROVISION] },
  // Translators read the newest translation of a key to publish only newer ones.
  {
    stream: STREAM.translated,
    info: [...TRANSLATORS, ...COMMITTERS, HEALTH, PROVISION],
    msgGet: [...TRANSLATORS, PROVISION],
  },
  { stream: STREAM.applied, info: [...COMMITTERS, HEALTH, PROVISION], msgGet: [PROVISION] },
  { stream: STREAM.heartbeats, info: EVERYONE, msgGet: [PROVISION] },
  { stream: KV_STREAM, info: [...COMMITTERS, PROVISION], msgGet: [...COMMITTERS, PROVISION] },
];

/** The JetStream API on streams: lookups as above, management for `provision` alone. */
const STREAM_CELLS: Cell[] = [
  pub('$JS.API.INFO', EVERYONE),
  pub('$JS.API.STREAM.NAMES', [PROVISION]),
  pub('$JS.API.STREAM.LIST', [PROVISION]),
  pub(`$JS.API.DIRECT.GET.${STREAM.translated}.${names.translated('onprem', 'edge', KEY)}`, [PROVISION]),
  ...STREAM_READERS.flatMap(({ stream, info, msgGet }) => [
    pub(`$JS.API.STREAM.INFO.${stream}`, info),
    pub(`$JS.API.STREAM.MSG.GET.${stream}`, msgGet),
    pub(`$JS.API.STREAM.CREATE.${stream}`, [PROVISION]),
    pub(`$JS.API.STREAM.UPDATE.${stream}`, [PROVISION]),
    pub(`$JS.API.STREAM.DELETE.${stream}`, [PROVISION]),
    pub(`$JS.API.STREAM.PURGE.${stream}`, [PROVISION]),
    pub(`$JS.API.STREAM.MSG.DELETE.${stream}`, [PROVISION]),
    pub(`$JS.API.CONSUMER.LIST.${stream}`, [PROVISION]),
  ]),
];

/**
 * The durable consumers: only `provision` creates, updates or deletes them (whatever API form); their
 * own service fetches from and acknowledges on them; health may look them up.
 */
const DURABLE_CELLS: Cell[] = DURABLES.flatMap(({ stream, durable, filterSubject, owner }) => [
  pub(`$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${durable}`, [PROVISION]),
  pub(`$JS.API.CONSUMER.CREATE.${stream}.${durable}`, [PROVISION]),
  // The create-or-update form nats.js uses for a consumer with a name and a filter (server 2.9+).
  pub(`$JS.API.CONSUMER.CREATE.${stream}.${durable}.${filterSubject}`, [PROVISION]),
  pub(`$JS.API.CONSUMER.DELETE.${stream}.${durable}`, [PROVISION]),
  pub(`$JS.API.CONSUMER.INFO.${stream}.${durable}`, [owner, HEALTH, PROVISION]),
  pub(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${durable}`, [owner, PROVISION]),
  pub(`$JS.ACK.${stream}.${durable}.1.7.7.1700000000000000000.0`, [owner]),
]);

/**
 * The health service's consumers: ephemeral pull consumers it names itself and creates with the named
 * form of the API, on the whole of each stream it reads. It may look any consumer up, but neither make,
 * update, pull from nor delete one of the durables, and not use the unnamed create form (whose payload
 * may name a durable).
 */
const HEALTH_FILTERS: Record<keyof typeof STREAM, string> = {
  committed: names.committedFilter(),
  translated: names.translatedFilter(),
  applied: names.appliedFilter(),
  heartbeats: names.heartbeatFilter(),
};
const EPHEMERAL_CELLS: Cell[] = [
  ...Object.entries(HEALTH_FILTERS).flatMap(([kind, filter]) => {
    const stream = STREAM[kind as keyof typeof STREAM];
    return [
      pub(`$JS.API.CONSUMER.CREATE.${stream}`, [PROVISION]),
      pub(`$JS.API.CONSUMER.CREATE.${stream}.${EPHEMERAL}`, [PROVISION]),
      pub(`$JS.API.CONSUMER.CREATE.${stream}.${EPHEMERAL}.${filter}`, [HEALTH, PROVISION]),
      pub(`$JS.API.CONSUMER.INFO.${stream}.${EPHEMERAL}`, [HEALTH, PROVISION]),
      pub(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${EPHEMERAL}`, [HEALTH, PROVISION]),
      pub(`$JS.API.CONSUMER.DELETE.${stream}.${EPHEMERAL}`, [PROVISION]),
    ];
  }),
  // Push consumers' flow control replies: nobody's (every consumer is pulled).
  pub(`$JS.FC.${STREAM.committed}.${EPHEMERAL}.probe`, NOBODY),
  // The applied-versions bucket is not one of the streams health follows.
  pub(`$JS.API.CONSUMER.CREATE.${KV_STREAM}`, [PROVISION]),
  pub(`$JS.API.CONSUMER.CREATE.${KV_STREAM}.${EPHEMERAL}.$KV.${BUCKET}.>`, [PROVISION]),
];

const ROLES: readonly NatsRole[] = ['collector', 'translator', 'committer', 'health', 'provision'];
const usersOfRole = (role: NatsRole): User[] => USERS.filter((user) => ROLE_OF[user] === role);

/**
 * Subscriptions: replies come to each role's own inbox and every read goes through a JetStream consumer
 * delivering there, so no user reads any subject directly. (The inbox is per role, not per user: both
 * translators share one, and likewise both committers.)
 */
const SUBSCRIBE_CELLS: Cell[] = [
  ...ROLES.map((role) => sub(`${inboxPrefix(names, role)}.probe`, usersOfRole(role))),
  sub('_INBOX.probe', NOBODY),
  sub('>', NOBODY),
  sub(`${PREFIX}.>`, NOBODY),
  sub(names.committedFilter('onprem'), NOBODY),
  sub(names.translatedFilter('onprem', 'cloud'), NOBODY),
  sub(names.appliedFilter('onprem', 'edge'), NOBODY),
  sub(names.heartbeatFilter(), NOBODY),
  sub(`$KV.${BUCKET}.>`, NOBODY),
  sub('$JS.API.>', NOBODY),
  sub('$JS.ACK.>', NOBODY),
];

const CELLS: Cell[] = [
  ...DATA_CELLS,
  ...STREAM_CELLS,
  ...DURABLE_CELLS,
  ...EPHEMERAL_CELLS,
  ...SUBSCRIBE_CELLS,
];

const cellKey = (cell: Pick<Cell, 'operation' | 'subject'>) => `${cell.operation} ${cell.subject}`;

/** One user's row of the expected table. */
function expectedRow(user: User): Record<string, Verdict> {
  return Object.fromEntries(
    CELLS.map((cell) => [cellKey(cell), cell.allowed.includes(user) ? 'allowed' : 'denied']),
  );
}

// ---- The server ---------------------------------------------------------------------------------------

type Verdict = 'allowed' | 'denied' | `inconsistent: ${string}`;

let dir: string;
let port: number;
let url: string;
let serverPid: number | undefined;
let logFile: string;
const passwords = new Map<string, string>();
let admin: Observer;
const results = new Map<User, Record<string, Verdict>>();

/** The deployment's users as the product makes them, and the observer. */
function serverUsers(): DeploymentNatsUser[] {
  const everything = { publish: { allow: ['>'] }, subscribe: { allow: ['>'] } };
  return [
    ...deploymentNatsUsers({ links: LINKS, nats: { subjectPrefix: PREFIX } }),
    { user: ADMIN, role: 'provision', serves: 'the test (every subject)', permissions: everything },
  ];
}

/** The environment variable of each user, as the generated block names them. */
function passwordVariables(block: string): Map<string, string> {
  const found = [...block.matchAll(/\{ user: ("[^"]+"), password: \$(\w+),/g)];
  return new Map(found.map(([, user, variable]) => [JSON.parse(user!) as string, variable!]));
}

/** A password nats-server reads back from its environment as the same string. */
const newPassword = () => `p${randomBytes(16).toString('hex')}`;

async function startServer(): Promise<void> {
  dir = await mkdtemp(join(tmpdir(), 'offsetsync-nats-matrix-'));
  const storeDir = join(dir, 'jetstream');
  await mkdir(storeDir);
  port = await freePort();
  url = `nats://127.0.0.1:${port}`;
  logFile = join(dir, 'nats-server.log');
  const block = natsAuthorizationBlock(serverUsers());
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [user, variable] of passwordVariables(block)) {
    const password = newPassword();
    passwords.set(user, password);
    env[variable] = password;
  }
  const configFile = join(dir, 'nats-server.conf');
  const config = [
    `listen: "127.0.0.1:${port}"`,
    `server_name: "offsetsync-permission-matrix-${port}"`,
    `jetstream { store_dir: ${JSON.stringify(storeDir)} }`,
    block,
  ].join('\n');
  await writeFile(configFile, config, { mode: 0o600 });
  serverPid = spawnDetached('nats-server', ['-c', configFile], logFile, env);
  await waitFor(
    `nats-server at ${url}`,
    async () => {
      if (serverPid === undefined || !isAlive(serverPid)) {
        const tail = await readFile(logFile, 'utf8').catch(() => '');
        throw new GiveUp(`nats-server exited; log tail:\n${tail.slice(-2000)}`);
      }
      const nc = await connect({ servers: url, reconnect: false, timeout: 1000, ...login(ADMIN) });
      try {
        await (await nc.jetstreamManager({ timeout: 1000 })).getAccountInfo();
        return true;
      } finally {
        await nc.close();
      }
    },
    { timeoutMs: 20_000 },
  );
}

function login(user: string): { user: string; pass: string } {
  const pass = passwords.get(user);
  if (pass === undefined) throw new Error(`the generated block has no password variable for ${user}`);
  return { user, pass };
}

// ---- Observing a connection ---------------------------------------------------------------------------

/** A connection and the permission violations the server reported on it, as `<operation> <subject>`. */
interface Observer {
  nc: NatsConnection;
  violations: Set<string>;
  /** Payloads received on the observer's `>` subscription (the admin only). */
  seen: Set<string>;
}

async function connectObserved(user: string, options: { inboxPrefix?: string } = {}): Promise<Observer> {
  const nc = await connect({ servers: url, reconnect: false, ...login(user), ...options });
  const violations = new Set<string>();
  void (async () => {
    for await (const status of nc.status()) {
      const context = status.permissionContext;
      if (status.type === Events.Error && context !== undefined) {
        violations.add(`${context.operation} ${context.subject}`);
      }
    }
  })();
  return { nc, violations, seen: new Set() };
}

let probeCounter = 0;
const nextProbeId = () => `probe-${++probeCounter}`;

/** A subject a message can be published on that the subscription `subject` matches. */
const concrete = (subject: string) =>
  subject
    .split('.')
    .map((token) => (token === '*' || token === '>' ? 'probe' : token))
    .join('.');

function verdict(violation: boolean, delivered: boolean): Verdict {
  if (violation && !delivered) return 'denied';
  if (!violation && delivered) return 'allowed';
  return `inconsistent: violation ${violation}, delivered ${delivered}`;
}

/**
 * Publishes once as `probe` and decides. The user's flush returns after the server processed the PUB
 * (a violation is written before its PONG); the admin's flush after the message, if routed, reached the
 * admin; and being a further round trip it also lets the user's status events, queued as microtasks, land.
 */
async function probePublish(probe: Observer, subject: string): Promise<Verdict> {
  const id = nextProbeId();
  probe.nc.publish(subject, sc.encode(id));
  await probe.nc.flush();
  await admin.nc.flush();
  return verdict(probe.violations.has(`publish ${subject}`), admin.seen.has(id));
}

/** Subscribes once as `probe`, has the admin publish a message the subscription matches, and decides. */
async function probeSubscribe(probe: Observer, subject: string): Promise<Verdict> {
  const id = nextProbeId();
  let delivered = false;
  let refused = false;
  const subscription = probe.nc.subscribe(subject, {
    callback: (error, msg) => {
      if (error !== null) refused = true;
      else if (sc.decode(msg.data) === id) delivered = true;
    },
  });
  await probe.nc.flush();
  admin.nc.publish(concrete(subject), sc.encode(id));
  await admin.nc.flush();
  await probe.nc.flush();
  if (!subscription.isClosed()) subscription.unsubscribe();
  const violation = probe.violations.has(`subscription ${subject}`);
  if (refused !== violation) return `inconsistent: refused ${refused}, violation ${violation}`;
  return verdict(violation, delivered);
}

/** Every cell of `user`'s row, on one connection (permission violations do not close it). */
async function observeRow(user: User): Promise<Record<string, Verdict>> {
  const probe = await connectObserved(user, { inboxPrefix: inboxPrefix(names, ROLE_OF[user]) });
  try {
    const row: Record<string, Verdict> = {};
    for (const cell of CELLS) {
      row[cellKey(cell)] =
        cell.operation === 'publish'
          ? await probePublish(probe, cell.subject)
          : await probeSubscribe(probe, cell.subject);
    }
    await probe.nc.flush();
    expect(probe.nc.isClosed(), `${user}'s connection survived its violations`).toBe(false);
    return row;
  } finally {
    await probe.nc.close();
  }
}

/** What the server writes on a raw connection after `commands`, up to and including its first PONG. */
async function rawExchange(commands: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setEncoding('utf8');
    socket.setTimeout(5_000, () => {
      socket.destroy();
      reject(new Error(`no PONG from nats-server; it wrote ${JSON.stringify(text)}`));
    });
    socket.on('error', reject);
    socket.on('connect', () => socket.write(commands.map((command) => `${command}\r\n`).join('')));
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (/(^|\r\n)PONG\r\n/.test(text)) {
        socket.end();
        resolve(text);
      }
    });
  });
}

function connectCommand(user: string): string {
  const { pass } = login(user);
  return `CONNECT ${JSON.stringify({ verbose: false, pedantic: false, protocol: 1, user, pass })}`;
}

// ---- The tests ----------------------------------------------------------------------------------------

beforeAll(async () => {
  await startServer();
  admin = await connectObserved(ADMIN);
  admin.nc.subscribe('>', {
    callback: (error, msg) => error === null && admin.seen.add(sc.decode(msg.data)),
  });
  await admin.nc.flush();
}, 60_000);

afterAll(async () => {
  if (results.size > 0) {
    const lines = [...results].map(([user, row]) => {
      const verdicts = Object.values(row);
      const count = (v: Verdict) => verdicts.filter((x) => x === v).length;
      const expected = expectedRow(user);
      const wrong = Object.keys(row).filter((key) => row[key] !== expected[key]);
      return `  ${user.padEnd(17)} allowed ${String(count('allowed')).padStart(3)}  denied ${String(count('denied')).padStart(3)}  not as expected ${wrong.length}${wrong.map((key) => `\n      ${key}: ${row[key]}, expected ${expected[key]}`).join('')}`;
    });
    console.log(`NATS permission matrix (${CELLS.length} cells per user):\n${lines.join('\n')}`);
  }
  await admin?.nc.close();
  if (serverPid !== undefined) await stopProcess(serverPid, { graceMs: 5_000 });
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
}, 30_000);

describe('NATS users of a two-link deployment on nats-server', () => {
  it('are one per role and cluster served, as the table assumes', () => {
    const generated = deploymentNatsUsers({ links: LINKS, nats: { subjectPrefix: PREFIX } });
    const pairs = (list: [string, string][]) => list.sort(([a], [b]) => a.localeCompare(b));
    expect(pairs(generated.map((u) => [u.user, u.role]))).toEqual(
      pairs(USERS.map((user) => [user, ROLE_OF[user]])),
    );
    expect(new Set(CELLS.map(cellKey)).size, 'every cell probed once').toBe(CELLS.length);
  });

  it('writes a violation on the wire before the PONG of the PING that follows it', async () => {
    const denied = names.translated('onprem', 'cloud', KEY);
    const text = await rawExchange([connectCommand(COLLECTOR), `PUB ${denied} 2`, 'hi', 'SUB > 1', 'PING']);
    const pong = text.search(/(^|\r\n)PONG\r\n/);
    const publishError = text.indexOf(`-ERR 'Permissions Violation for Publish to "${denied}"'`);
    const subscribeError = text.indexOf(`-ERR 'Permissions Violation for Subscription to ">"'`);
    expect(publishError, text).toBeGreaterThan(0);
    expect(subscribeError, text).toBeGreaterThan(0);
    expect(publishError).toBeLessThan(pong);
    expect(subscribeError).toBeLessThan(pong);
  });

  it('refuses a client without credentials, with a wrong password, or with another user’s password', async () => {
    const refusal = { code: ErrorCode.AuthorizationViolation };
    await expect(connect({ servers: url, reconnect: false })).rejects.toMatchObject(refusal);
    await expect(
      connect({ servers: url, reconnect: false, user: COMMITTER_CLOUD, pass: newPassword() }),
    ).rejects.toMatchObject(refusal);
    await expect(
      connect({ servers: url, reconnect: false, user: COMMITTER_CLOUD, pass: login(COMMITTER_EDGE).pass }),
    ).rejects.toMatchObject(refusal);
    // ...while the right password gets in.
    const nc = await connect({ servers: url, reconnect: false, ...login(COMMITTER_CLOUD) });
    await nc.close();
  });

  for (const user of USERS) {
    it(`lets ${user} publish and subscribe exactly as the threat model says`, async () => {
      const row = await observeRow(user);
      results.set(user, row);
      expect(row).toEqual(expectedRow(user));
    });
  }
});
