// `offsetsync cutover --group G --from A --to B`: waits until a group can start on the target without
// replaying or skipping a record, or says precisely why not.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { ConfigError, OffsetSyncHealthClient } from '@offsetsync/contracts';
import { KafkaAdapter } from '@offsetsync/kafka';
import {
  loadConfig,
  type OffsetSyncConfig,
  linkFilter,
  parseDuration,
  targetTopic,
  type TopicNames,
} from '@offsetsync/runtime';
import { pino } from 'pino';
import { type CommandIo, UsageError } from '../command.js';
import { cutoverPlan, type PlanRow } from '../cutover/cutover-plan.js';
import {
  type CutoverBlock,
  type CutoverVerdict,
  cutoverVerdict,
  provenVerdict,
} from '../cutover/cutover-verdict.js';
import { PROOF_WINDOW_DEFAULT, PROOF_WINDOW_MAX, type PartitionProof } from '../cutover/target-proof.js';
import { readAndProve } from '../cutover/target-proof-reads.js';
import { getGroup, healthAddressFromConfig, healthConnection } from '../health-client.js';
import { HEALTH_CONNECTION_OPTIONS, type HealthConnectionValues } from '../health-connection-options.js';
import { formatPlan, partitionStateName } from './status-format.js';

interface CutoverArgs {
  group: string;
  from: string;
  to: string;
  config: string | undefined;
  connection: HealthConnectionValues;
  timeoutMs: number;
  intervalMs: number;
  /** Records compared on each side of the committed offsets (`--proof-window`). */
  proofWindow: number;
  json: boolean;
  /** Look once and show the plan per partition, without waiting (`--dry-run`). */
  dryRun: boolean;
}

function records(option: string, value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const parsed = /^[0-9]+$/.test(value) ? Number(value) : NaN;
  if (!(parsed >= 1 && parsed <= max)) {
    throw new UsageError(`--${option}: expected a number of records from 1 to ${max}, got "${value}"`);
  }
  return parsed;
}

function duration(option: string, value: string | undefined, fallbackMs: number): number {
  if (value === undefined) return fallbackMs;
  const parsed = parseDuration(value);
  if (!parsed.ok) throw new UsageError(`--${option}: ${parsed.message}`);
  return parsed.ms;
}

export function parseCutoverArgs(argv: readonly string[]): CutoverArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        group: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        config: { type: 'string', short: 'c' },
        ...HEALTH_CONNECTION_OPTIONS,
        timeout: { type: 'string' },
        interval: { type: 'string' },
        'proof-window': { type: 'string' },
        json: { type: 'boolean', default: false },
        'dry-run': { type: 'boolean', default: false },
      },
    }));
  } catch (error: unknown) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const missing = (['group', 'from', 'to'] as const).filter((k) => !values[k]);
  if (missing.length > 0) throw new UsageError(`missing ${missing.map((k) => `--${k}`).join(', ')}`);
  return {
    group: values.group!,
    from: values.from!,
    to: values.to!,
    config: values.config,
    connection: {
      address: values.address,
      tls: values.tls,
      'ca-file': values['ca-file'],
      'cert-file': values['cert-file'],
      'key-file': values['key-file'],
    },
    timeoutMs: duration('timeout', values.timeout, 120_000),
    intervalMs: duration('interval', values.interval, 1_000),
    proofWindow: records('proof-window', values['proof-window'], PROOF_WINDOW_DEFAULT, PROOF_WINDOW_MAX),
    json: values.json,
    dryRun: values['dry-run'],
  };
}

interface Observation {
  verdict: CutoverVerdict;
  /** What was checked on the target, per partition; empty while the verdict was blocked before that. */
  proofs: PartitionProof[];
  /** Every committed partition as a move now would find it; empty when the source or health was unreachable. */
  plan: PlanRow[];
}

/**
 * One look at the source cluster, the health service and, once those say safe, the target's records; an
 * unreachable one is a reason, not a crash.
 */
async function observe(
  args: CutoverArgs,
  clusters: { source: KafkaAdapter; target: KafkaAdapter; topicNames: TopicNames | undefined },
  health: OffsetSyncHealthClient,
  healthAddress: string,
): Promise<Observation> {
  const { source, target } = clusters;
  const [group, committed, status] = await Promise.allSettled([
    source.describeGroup(args.group),
    source.fetchCommittedOffsets(args.group),
    getGroup(health, { sourceCluster: args.from, targetCluster: args.to, group: args.group }),
  ]);
  const unreachable = [
    group.status === 'rejected'
      ? `cannot read group ${args.group} on ${args.from}: ${message(group.reason)}`
      : '',
    committed.status === 'rejected'
      ? `cannot read its offsets on ${args.from}: ${message(committed.reason)}`
      : '',
    status.status === 'rejected'
      ? `cannot ask the health service at ${healthAddress}: ${message(status.reason)}`
      : '',
  ].filter((m) => m !== '');
  if (group.status === 'rejected' || committed.status === 'rejected' || status.status === 'rejected') {
    return {
      verdict: {
        safe: false,
        summary: `cannot tell whether group ${args.group} can start on ${args.to}:`,
        blocks: unreachable.map((m) => ({ code: 'UNREACHABLE', partition: '', message: m })),
      },
      proofs: [],
      plan: [],
    };
  }
  const plan = cutoverPlan(committed.value, status.value);
  const verdict = cutoverVerdict({
    group: args.group,
    from: args.from,
    to: args.to,
    source: group.value,
    sourceCommitted: committed.value,
    status: status.value,
  });
  if (!verdict.safe) return { verdict, proofs: [], plan };
  let proofs: PartitionProof[];
  try {
    proofs = await readAndProve({
      group: args.group,
      committed: committed.value.filter((c) => c.offset >= 0),
      source,
      target,
      window: args.proofWindow,
      from: args.from,
      to: args.to,
      targetTopic: (topic) => {
        const named = targetTopic(clusters.topicNames, args.from, topic);
        // A topic the link does not replicate is refused by the translator, and the verdict blocks on it.
        return named.kind === 'replicated' ? named.topic : topic;
      },
    });
  } catch (error: unknown) {
    return {
      verdict: {
        safe: false,
        summary: `cannot tell whether group ${args.group} can start on ${args.to}:`,
        blocks: [
          {
            code: 'TARGET_UNREADABLE',
            partition: '',
            message: `cannot read the group's offsets or records on ${args.to}: ${message(error)}`,
          },
        ],
      },
      proofs: [],
      plan,
    };
  }
  return { verdict: provenVerdict(verdict, proofs, { group: args.group, to: args.to }), proofs, plan };
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Prints the outcome, as one JSON object with `--json` or as text, with the plan per partition when given
 * (`--dry-run`); resolves to the exit code: 0 safe, 1 not.
 */
function report(
  io: CommandIo,
  args: CutoverArgs,
  outcome: { verdict: CutoverVerdict; proofs: PartitionProof[]; plan?: PlanRow[] },
): number {
  const { verdict, proofs, plan } = outcome;
  if (args.json) {
    const json = {
      group: args.group,
      from: args.from,
      to: args.to,
      safe: verdict.safe,
      blocks: verdict.safe ? [] : verdict.blocks,
      proofs,
      ...(plan === undefined
        ? {}
        : { plan: plan.map((row) => ({ ...row, state: partitionStateName(row.state) })) }),
    };
    io.stdout(`${JSON.stringify(json)}\n`);
  } else io.stdout(`${describe(verdict)}\n${plan === undefined ? '' : `\n${formatPlan(plan)}\n`}`);
  return verdict.safe ? 0 : 1;
}

function describe(verdict: CutoverVerdict): string {
  return verdict.safe
    ? verdict.summary
    : [verdict.summary, ...verdict.blocks.map((b) => `  - ${b.message}`)].join('\n');
}

function clusterOf(config: OffsetSyncConfig, alias: string) {
  const cluster = config.clusters[alias];
  if (cluster === undefined) {
    const known = Object.keys(config.clusters).join(', ') || 'none';
    throw new UsageError(`cluster "${alias}" is not in the config (known: ${known})`);
  }
  return cluster;
}

/** `offsetsync cutover ...`: 0 when the move is safe, 1 when it did not become safe within --timeout. */
export async function runCutover(argv: readonly string[], io: CommandIo): Promise<number> {
  const args = parseCutoverArgs(argv);
  let config: OffsetSyncConfig;
  try {
    config = loadConfig({ file: args.config });
  } catch (error: unknown) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr(`offsetsync cutover: ${error.message}\n`);
    return 2;
  }
  const link = config.links.find((l) => l.source === args.from && l.target === args.to);
  if (link === undefined) throw new UsageError(`the config has no link ${args.from} -> ${args.to}`);
  const excluded = linkFilter(link).group(args.group);
  // Nothing of the group goes along the link, or nothing is committed there: no wait makes the move safe.
  const refusal: CutoverBlock | undefined =
    excluded !== undefined
      ? { code: 'EXCLUDED', partition: '', message: `the group is never sent to ${args.to}: ${excluded}` }
      : link.mode === 'observe' && !args.dryRun
        ? {
            code: 'OBSERVED',
            partition: '',
            message: `the link ${args.from} -> ${args.to} observes (links[].mode observe): offsetsync commits nothing on ${args.to}; --dry-run shows what it would commit, and mode commit makes it commit`,
          }
        : undefined;
  if (refusal !== undefined) {
    const verdict: CutoverVerdict = {
      safe: false,
      summary: `not safe to start group ${args.group} on ${args.to}:`,
      blocks: [refusal],
    };
    return report(io, args, { verdict, proofs: [] });
  }
  const connection = healthConnection(args.connection, healthAddressFromConfig(config));
  const healthAddress = connection.address;
  const adapter = (alias: string) => {
    const cluster = clusterOf(config, alias);
    return new KafkaAdapter({
      cluster,
      clientId: cluster.clientId ?? 'offsetsync-cutover',
      logger: pino({ level: 'silent' }),
    });
  };
  const clusters = { source: adapter(args.from), target: adapter(args.to), topicNames: link.topicNames };
  const health = new OffsetSyncHealthClient(connection.address, connection.credentials);
  try {
    const deadline = Date.now() + args.timeoutMs;
    const first = await observe(args, clusters, health, healthAddress);
    if (args.dryRun) return report(io, args, first);
    let { verdict, proofs } = first;
    let shown = '';
    // An exclusion stays while the config does: waiting would not change the verdict.
    const permanent = (v: CutoverVerdict) => !v.safe && v.blocks.some((b) => b.code === 'EXCLUDED');
    while (!verdict.safe && !permanent(verdict) && Date.now() + args.intervalMs <= deadline) {
      const text = describe(verdict).replace(/^not safe[^\n]*:/, 'waiting:');
      if (!args.json && text !== shown) io.stderr(`${text}\n`);
      shown = text;
      await sleep(args.intervalMs);
      ({ verdict, proofs } = await observe(args, clusters, health, healthAddress));
    }
    return report(io, args, { verdict, proofs });
  } finally {
    health.close();
    await Promise.all([clusters.source.disconnect(), clusters.target.disconnect()]);
  }
}
