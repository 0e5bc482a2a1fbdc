// Runs Apache Kafka's own command-line tools (consumer groups, console consumer and producer) on the
// test bed's cached classpath. Tests use them where the real Java client behaves differently from
// kafkajs: KIP-848 consumer groups, admin deletions, compression codecs kafkajs lacks.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureKafkaDistribution } from './kafka-dist.js';
import type { KafkaClientCredentials } from './testbed.js';

/** Main classes of the tools in `kafka-tools-<version>.jar`. */
const KafkaToolMainClass = {
  consumerGroups: 'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand',
  consoleConsumer: 'org.apache.kafka.tools.consumer.ConsoleConsumer',
  consoleProducer: 'org.apache.kafka.tools.ConsoleProducer',
} as const;

type KafkaTool = keyof typeof KafkaToolMainClass;

/** The flag each tool reads a client properties file from (Kafka 4.1 names them differently). */
const ClientConfigFlag: Record<KafkaTool, string> = {
  consumerGroups: '--command-config',
  consoleConsumer: '--consumer.config',
  consoleProducer: '--producer.config',
};

/** What a finished tool run left behind. */
export interface KafkaToolResult {
  /** The process exit code; null when it was killed (see `timedOut`). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** True when the run outlived `timeoutMs` and was killed. */
  timedOut: boolean;
  /**
   * Whether the tool did what it was asked. Exit code 0 alone does not say so: ConsumerGroupCommand
   * exits 0 and prints `Error: ...` on stdout when a group or offset could not be found or deleted.
   */
  ok: boolean;
  /** The full command line, for error messages. */
  command: string;
}

export interface RunKafkaToolOptions {
  /** Kill the JVM after this long. Default 60 000 ms. */
  timeoutMs?: number;
  /** Written to the tool's stdin, which is then closed. Default: nothing (stdin closed at once). */
  input?: string;
  /** Jar folder to use. Default: the cached distribution of `ensureKafkaDistribution()`. */
  libDir?: string;
  /** Ends the tool with SIGTERM, a clean shutdown (a consumer leaves its group), when aborted. */
  signal?: AbortSignal;
  /** Called with each chunk the tool writes to stdout, as it arrives. */
  onStdout?: (chunk: string) => void;
  /** Log in over SASL_SSL (SCRAM-SHA-512), as the secured test bed requires. Default: plaintext. */
  security?: KafkaClientCredentials;
}

const DEFAULT_TIMEOUT_MS = 60_000;

// Tools log through log4j2; without a config they warn about the missing one, and with the broker's
// they would log INFO chatter. Warnings and errors go to stderr, stdout stays the tool's own output.
const QUIET_LOG4J2 = [
  'status = error',
  'appender.err.type = Console',
  'appender.err.name = err',
  'appender.err.target = SYSTEM_ERR',
  'appender.err.layout.type = PatternLayout',
  'appender.err.layout.pattern = %p %m (%c)%n',
  'rootLogger.level = warn',
  'rootLogger.appenderRef.err.ref = err',
  '',
].join('\n');

let quietLog4jFile: Promise<string> | undefined;

/**
 * The quiet log4j2 config in the temporary folder, named after its content. Every process writes the
 * same bytes and renames them into place, so concurrent runs never see a half-written file and nothing
 * is left behind per run that would need cleaning up.
 */
function quietLog4jConfig(): Promise<string> {
  quietLog4jFile ??= (async () => {
    const dir = join(tmpdir(), 'offsetsync-kafka-tools');
    await mkdir(dir, { recursive: true });
    const hash = createHash('sha256').update(QUIET_LOG4J2).digest('hex').slice(0, 10);
    const file = join(dir, `log4j2-${hash}.properties`);
    const partial = `${file}.${process.pid}.partial`;
    await writeFile(partial, QUIET_LOG4J2);
    await rename(partial, file);
    return file;
  })();
  return quietLog4jFile;
}

/** Java client properties of a SASL_SSL SCRAM-SHA-512 login that trusts the bed's CA (a PEM file). */
function clientSecurityProperties(credentials: KafkaClientCredentials): string {
  // A JAAS string value takes \\ and \" escapes; the properties file then needs every backslash doubled.
  const jaasString = (value: string) => `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
  const jaas = `org.apache.kafka.common.security.scram.ScramLoginModule required username=${jaasString(credentials.username)} password=${jaasString(credentials.password)};`;
  const property = (value: string) => value.replaceAll('\\', '\\\\');
  return [
    'security.protocol=SASL_SSL',
    'sasl.mechanism=SCRAM-SHA-512',
    `sasl.jaas.config=${property(jaas)}`,
    'ssl.truststore.type=PEM',
    `ssl.truststore.location=${property(credentials.caFile)}`,
    '',
  ].join('\n');
}

/**
 * Runs `java -cp <libDir>/* <mainClass> ...args` and resolves with its output once it exits, whatever
 * the exit code; a run that outlives `timeoutMs` is killed and reported with `timedOut`. With `security`
 * the login goes in a properties file of the run's own (it holds the password), removed afterwards.
 */
async function runKafkaTool(
  tool: KafkaTool,
  toolArgs: readonly string[],
  options: RunKafkaToolOptions = {},
): Promise<KafkaToolResult> {
  if (options.security === undefined) return runJava(KafkaToolMainClass[tool], toolArgs, options);
  const dir = await mkdtemp(join(tmpdir(), 'offsetsync-kafka-tool-'));
  try {
    const file = join(dir, 'client.properties');
    await writeFile(file, clientSecurityProperties(options.security), { mode: 0o600 });
    return await runJava(KafkaToolMainClass[tool], [...toolArgs, ClientConfigFlag[tool], file], options);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function runJava(
  mainClass: string,
  args: readonly string[],
  options: RunKafkaToolOptions,
): Promise<KafkaToolResult> {
  const libDir = options.libDir ?? (await ensureKafkaDistribution()).libDir;
  const javaArgs = [
    '-Xmx256m',
    // Short-lived tools start faster with the client compiler and the serial collector.
    '-XX:TieredStopAtLevel=1',
    '-XX:+UseSerialGC',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${await quietLog4jConfig()}`,
    '-cp',
    `${libDir}/*`,
    mainClass,
    ...args,
  ];
  const command = `java ${javaArgs.join(' ')}`;
  const child = spawn('java', javaArgs, { stdio: ['pipe', 'pipe', 'pipe'] });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    stdout.push(chunk);
    options.onStdout?.(chunk.toString('utf8'));
  });
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  const terminate = () => child.kill('SIGTERM');
  if (options.signal?.aborted === true) terminate();
  options.signal?.addEventListener('abort', terminate, { once: true });
  // A tool that exits before reading its input must not fail the run with EPIPE.
  child.stdin.on('error', () => undefined);
  child.stdin.end(options.input ?? '');

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  try {
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code) => resolve(code));
    });
    const out = Buffer.concat(stdout).toString('utf8');
    return {
      exitCode,
      stdout: out,
      stderr: Buffer.concat(stderr).toString('utf8'),
      timedOut,
      ok: exitCode === 0 && !timedOut && !/^Error: /m.test(out),
      command,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', terminate);
  }
}

/** Throws unless `result.ok`; returns the result otherwise, for chaining. */
export function assertToolSucceeded<R extends KafkaToolResult>(result: R): R {
  if (result.ok) return result;
  const how = result.timedOut ? 'timed out' : `exited with ${result.exitCode}`;
  throw new Error(
    `${result.command} ${how}\nstdout:\n${result.stdout.slice(-2000)}\nstderr:\n${result.stderr.slice(-2000)}`,
  );
}

/**
 * `kafka-consumer-groups.sh --bootstrap-server <bootstrap> ...args`, e.g. `['--describe', '--group', g]`,
 * `['--delete', '--group', g]`, `['--delete-offsets', '--group', g, '--topic', t]` or
 * `['--reset-offsets', '--group', g, '--topic', t, '--to-offset', '5', '--execute']`.
 * Check `ok` (or use assertToolSucceeded): the tool exits 0 even when it fails and says so on stdout.
 */
export function consumerGroupsCommand(
  bootstrap: string,
  args: readonly string[],
  options: RunKafkaToolOptions = {},
): Promise<KafkaToolResult> {
  return runKafkaTool('consumerGroups', ['--bootstrap-server', bootstrap, ...args], options);
}

export interface ConsoleConsumerOptions {
  bootstrap: string;
  topic: string;
  group: string;
  /** 'consumer' joins a KIP-848 consumer group; 'classic' the older rebalance protocol. */
  groupProtocol: 'classic' | 'consumer';
  /** Exit after this many records. */
  maxMessages: number;
  /**
   * Stop when no record arrives for this long. Default 30 000 ms. The tool then still exits 0 and
   * commits, but logs a TimeoutException: the result's `ok` is false unless `maxMessages` arrived.
   */
  timeoutMs?: number;
  /** Start at the earliest offset when the group has no committed one. Default true. */
  fromBeginning?: boolean;
  /** More consumer properties, passed as `--consumer-property key=value`. */
  extraProperties?: Readonly<Record<string, string>>;
  /** Kill the JVM after this long. Default: `timeoutMs` plus 30 000 ms for start-up and the group join. */
  processTimeoutMs?: number;
  /** Log in over SASL_SSL (SCRAM-SHA-512), as the secured test bed requires. Default: plaintext. */
  security?: KafkaClientCredentials;
}

export interface ConsoleConsumerResult extends KafkaToolResult {
  /** The record values printed, one per record (values must not contain line breaks). */
  values: string[];
}

// Printed on stderr when no record arrived within --timeout-ms.
const CONSUMER_TIMEOUT = /TimeoutException/;

/** The arguments both console-consumer helpers pass: where, which group, from where, the properties. */
function consoleConsumerArgs(options: Omit<ConsoleConsumerOptions, 'maxMessages' | 'timeoutMs'>): string[] {
  const properties: Record<string, string> = {
    'group.protocol': options.groupProtocol,
    ...options.extraProperties,
  };
  return [
    '--bootstrap-server',
    options.bootstrap,
    '--topic',
    options.topic,
    '--group',
    options.group,
    ...(options.fromBeginning === false ? [] : ['--from-beginning']),
    ...Object.entries(properties).flatMap(([key, value]) => ['--consumer-property', `${key}=${value}`]),
  ];
}

/**
 * Runs `kafka-console-consumer.sh` in a consumer group. With auto-commit on (the default) the consumer
 * commits its position when it closes, so after a clean exit the group has committed offsets.
 */
export async function consoleConsumer(options: ConsoleConsumerOptions): Promise<ConsoleConsumerResult> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const args = [
    ...consoleConsumerArgs(options),
    '--max-messages',
    String(options.maxMessages),
    '--timeout-ms',
    String(timeoutMs),
  ];
  const result = await runKafkaTool('consoleConsumer', args, {
    timeoutMs: options.processTimeoutMs ?? timeoutMs + 30_000,
    ...(options.security === undefined ? {} : { security: options.security }),
  });
  const values = result.stdout.split('\n').filter((line) => line.length > 0);
  const ok = result.ok && values.length === options.maxMessages && !CONSUMER_TIMEOUT.test(result.stderr);
  return { ...result, ok, values };
}

export interface ConsoleProducerOptions {
  bootstrap: string;
  topic: string;
  /** One record per entry; a value must not contain a line break. */
  values: readonly string[];
  /** `none`, `gzip`, `snappy`, `lz4` or `zstd`. Default: the tool's default (none). */
  compressionCodec?: 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
  /** More producer properties, passed as `--producer-property key=value`. */
  extraProperties?: Readonly<Record<string, string>>;
  /** Kill the JVM after this long. Default 60 000 ms. */
  timeoutMs?: number;
  /** Log in over SASL_SSL (SCRAM-SHA-512), as the secured test bed requires. Default: plaintext. */
  security?: KafkaClientCredentials;
}

/** Runs `kafka-console-producer.sh`, sending `values` as record values, and waits for it to finish. */
export function consoleProducer(options: ConsoleProducerOptions): Promise<KafkaToolResult> {
  const args = [
    '--bootstrap-server',
    options.bootstrap,
    '--topic',
    options.topic,
    ...(options.compressionCodec === undefined ? [] : ['--compression-codec', options.compressionCodec]),
    ...Object.entries(options.extraProperties ?? {}).flatMap(([key, value]) => [
      '--producer-property',
      `${key}=${value}`,
    ]),
  ];
  if (options.values.some((value) => /[\r\n]/.test(value))) {
    throw new Error('consoleProducer sends one record per line: a value must not contain a line break');
  }
  const input = options.values.length === 0 ? '' : `${options.values.join('\n')}\n`;
  return runKafkaTool('consoleProducer', args, {
    input,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.security === undefined ? {} : { security: options.security }),
  });
}

/** A console consumer that runs until stopped: see {@link startConsoleConsumer}. */
export interface RunningConsoleConsumer {
  /** The record values printed so far, one per record. */
  values(): string[];
  /**
   * Ends it with SIGTERM: it commits, leaves the group and exits. Resolves once it exited; `ok` when it
   * exited by that signal (the JVM's 143) or by itself with 0. Calling it again returns the same promise.
   */
  stop(): Promise<KafkaToolResult>;
}

/**
 * Starts `kafka-console-consumer.sh` in a consumer group and leaves it running (a live member of the
 * group) until `stop()`; it is killed after `processTimeoutMs` (default 600 000 ms) in any case.
 */
export function startConsoleConsumer(
  options: Omit<ConsoleConsumerOptions, 'maxMessages' | 'timeoutMs'>,
): RunningConsoleConsumer {
  const args = consoleConsumerArgs(options);
  const abort = new AbortController();
  let printed = '';
  const run = runKafkaTool('consoleConsumer', args, {
    timeoutMs: options.processTimeoutMs ?? 600_000,
    ...(options.security === undefined ? {} : { security: options.security }),
    signal: abort.signal,
    onStdout: (chunk) => {
      printed += chunk;
    },
  });
  let stopped: Promise<KafkaToolResult> | undefined;
  return {
    values: () => printed.split('\n').slice(0, -1),
    stop: () => {
      abort.abort();
      stopped ??= run.then((result) => ({
        ...result,
        ok: !result.timedOut && (result.exitCode === 0 || result.exitCode === 143),
      }));
      return stopped;
    },
  };
}
