// The options of the health benchmark (`npm run -s bench -- --scenario health --help`), read and checked
// once: every problem is reported at once, nothing is silently corrected. Pure.
import { parseDuration } from '@offsetsync/runtime';

export interface HealthBenchSettings {
  groups: number;
  partitions: number;
  topics: number;
  trickleRate: number;
  trickleSeconds: number;
  churnRounds: number;
  churnFraction: number;
  /** `health.forgetDeletedGroupAfterMs` of the health processes of the churn phase and the restart after. */
  forgetDeletedAfterMs: number;
  settleSeconds: number;
  /** Rounds of API calls after the replay. */
  probes: number;
  /** Publishes awaiting JetStream's acknowledgement at once. */
  inFlight: number;
  seed: number;
  gcTrace: boolean;
  replayTimeoutSeconds: number;
}

/** The options as parseArgs gives them (strings, and the one flag). */
export interface HealthBenchOptions {
  groups: string;
  partitions: string;
  topics: string;
  'trickle-rate': string;
  'trickle-seconds': string;
  'churn-rounds': string;
  'churn-fraction': string;
  'forget-deleted-after': string;
  settle: string;
  probes: string;
  'in-flight': string;
  seed: string;
  'no-gc-trace'?: boolean;
  'replay-timeout': string;
}

/** The defaults: 100,000 groups x 10 partitions = 1,000,000 group partitions. */
export const HEALTH_BENCH_DEFAULTS: HealthBenchOptions = {
  groups: '100000',
  partitions: '10',
  topics: '100',
  'trickle-rate': '2000',
  'trickle-seconds': '30',
  'churn-rounds': '5',
  'churn-fraction': '0.2',
  'forget-deleted-after': '30s',
  settle: '10',
  probes: '20',
  'in-flight': '1000',
  seed: '7',
  'replay-timeout': '1800',
};

/** The settings of `options`; throws one error listing every bad option. */
export function healthBenchSettings(options: HealthBenchOptions): HealthBenchSettings {
  const problems: string[] = [];
  const integer = (name: keyof HealthBenchOptions, min: number): number => {
    const value = Number(options[name]);
    if (!Number.isInteger(value) || value < min) problems.push(`--${name} must be an integer >= ${min}`);
    return value;
  };
  const fraction = (name: keyof HealthBenchOptions): number => {
    const value = Number(options[name]);
    if (!(value > 0 && value <= 1)) problems.push(`--${name} must be in (0, 1]`);
    return value;
  };
  const duration = (name: keyof HealthBenchOptions): number => {
    const parsed = parseDuration(options[name]);
    if (parsed.ok && parsed.ms >= 1) return parsed.ms;
    problems.push(`--${name} must be a duration of at least 1 ms, such as 30s`);
    return Number.NaN;
  };
  const settings: HealthBenchSettings = {
    groups: integer('groups', 1),
    partitions: integer('partitions', 1),
    topics: integer('topics', 1),
    trickleRate: integer('trickle-rate', 3),
    trickleSeconds: integer('trickle-seconds', 1),
    churnRounds: integer('churn-rounds', 0),
    churnFraction: fraction('churn-fraction'),
    forgetDeletedAfterMs: duration('forget-deleted-after'),
    settleSeconds: integer('settle', 0),
    probes: integer('probes', 1),
    inFlight: integer('in-flight', 1),
    seed: integer('seed', 0),
    gcTrace: options['no-gc-trace'] !== true,
    replayTimeoutSeconds: integer('replay-timeout', 1),
  };
  if (problems.length > 0) throw new RangeError(problems.join('\n'));
  return settings;
}
