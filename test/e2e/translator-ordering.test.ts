// Two translator instances share the link's durable consumer; one of them reaches nats-server through a
// TCP proxy that holds every byte for a while, so its translations really arrive after newer ones of the
// same key. A burst of source commits with rewinds (a commit back to a lower offset is a newer version and
// must propagate) goes through collector -> translators -> committer. Checked: the translated stream
// (seen message by message by an ordered consumer) never holds an older version of a key after a newer
// one; the target's committed offsets (sampled during the burst) never go back to an older version and
// go down only with a newer one, a source rewind; every key ends on its newest version on both; and the
// late instance did have translations to leave out.
import { consumerOpts, type JetStreamSubscription } from 'nats';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import {
  compareVersions,
  formatVersion,
  Names,
  OffsetCommitted,
  OffsetTranslated,
  parseCommitMetadata,
  ServiceRole,
  TranslationOutcome,
  type Version,
} from '@offsetsync/contracts';
import { startReplicator, startService } from '@offsetsync/harness';
import { startDelayingProxy } from '../infra/delaying-proxy.js';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { heartbeats, lastOnSubject, natsConnection } from '../support/jetstream.js';
import { connectedAdmin, kafkaClient, testAdapter } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');

/** Source commits in the burst (ORDERING_COMMITS overrides, for a quicker run by hand). */
const COMMITS = Number(process.env.ORDERING_COMMITS ?? 10_000);
/** Every group commits all its partitions in one OffsetCommit, as a consumer does. */
const GROUPS = 10;
const PARTITIONS = 5;
const RECORDS = 1_000;
/** Chance that a commit goes back instead of forward. */
const REWIND_CHANCE = 0.05;
/**
 * The link between the late translator and nats-server: every chunk held this long each way, and now and
 * then nothing gets through for a while (kept well below the publisher's 5 s timeout).
 */
const DELAY_MS = 100;
const STALLS = { everyMs: 6_000, forMs: 3_500 };

/** mulberry32: the same burst on every run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * The offsets each group commits, one OffsetCommit of all its partitions per step: mostly forward, now
 * and then back (a rewind). The last step of every partition goes back to an offset not committed before,
 * so the key's newest commit can be told apart from all earlier ones by its offset.
 */
function burst(steps: number): number[][][] {
  const random = seededRandom(14);
  return Array.from({ length: GROUPS }, () => {
    const offsets = Array.from({ length: PARTITIONS }, () => 1 + Math.floor(random() * 100));
    const used = offsets.map((o) => new Set([o]));
    const plan: number[][] = [[...offsets]];
    for (let step = 1; step < steps; step++) {
      for (let p = 0; p < PARTITIONS; p++) {
        const current = offsets[p]!;
        const back = random() < REWIND_CHANCE || current > RECORDS - 20;
        offsets[p] = back
          ? Math.max(1, current - 20 - Math.floor(random() * 200))
          : current + 1 + Math.floor(random() * 8);
        if (step === steps - 1) {
          let last = Math.max(1, current - 30);
          while (used[p]!.has(last)) last = last > 1 ? last - 1 : RECORDS - 1;
          offsets[p] = last;
        }
        used[p]!.add(offsets[p]!);
      }
      plan.push([...offsets]);
    }
    return plan;
  });
}

/** What one key held, sampled: its version and offset. */
interface Sample {
  version: Version;
  offset: number;
}

describe('translator ordering', () => {
  it(
    'keeps every key on its newest translation with two translators, one behind a slow link',
    { timeout: 240_000 },
    async () => {
      const testStart = performance.now();
      const since = (start: number) => Math.round(performance.now() - start);
      const base = uniqueName('ordering');
      const topic = `${base}-data`;
      const groups = Array.from({ length: GROUPS }, (_, g) => `${base}-g${g}`);
      const plans = burst(Math.ceil(COMMITS / (GROUPS * PARTITIONS)));
      const keyOf = (group: string, partition: number) => `${group}/${partition}`;

      // Records on the source, copied one to one (same offsets) to the target before any commit.
      const kafka = kafkaClient(testbed.source.bootstrapServers);
      await (
        await connectedAdmin(kafka)
      ).createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
      const producer = kafka.producer();
      await producer.connect();
      onTestFinished(() => producer.disconnect());
      const stamp = Date.now() - 30 * 60_000;
      for (let start = 0; start < RECORDS; start += 500) {
        await producer.send({
          topic,
          messages: Array.from({ length: PARTITIONS }, (_, p) =>
            Array.from({ length: 500 }, (_, i) => ({
              key: `k${(start + i) % 17}`,
              value: `id:${p}:${start + i}`,
              partition: p,
              timestamp: String(stamp + start + i),
            })),
          ).flat(),
        });
      }
      const replicator = await startReplicator({
        source: testbed.source,
        target: testbed.target,
        topic,
        maxBatchRecords: 500,
      });
      await replicator.waitUntilCaughtUp(60_000);

      const config = testConfig(testbed, {
        collector: { cluster: 'source', groups: { include: [`^${base}-g`] }, fetchMaxWaitMs: '20ms' },
        translator: { target: 'target', pendingRetryMinMs: '100ms', pendingRetryMaxMs: '500ms' },
        committer: { target: 'target' },
      });
      const names = new Names(config.nats.subjectPrefix);
      const proxy = await startDelayingProxy({
        upstream: testbed.nats.url,
        delayMs: DELAY_MS,
        stalls: STALLS,
      });
      onTestFinished(() => proxy.close());
      await Promise.all([
        startService('collector', config),
        startService('committer', config),
        startService('translator', { ...config, instance: { id: `${base}-translator-direct` } }),
        startService('translator', {
          ...config,
          instance: { id: `${base}-translator-late` },
          nats: { ...config.nats, servers: [proxy.url] },
        }),
      ]);
      const nc = await natsConnection(testbed.nats.url);
      const jsm = await nc.jetstreamManager();
      await waitFor(
        'both translators running',
        async () =>
          (await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_TRANSLATOR)).length === 2 ? true : undefined,
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      // A probe group's commit through collector and translators: the collector reads __consumer_offsets
      // before the burst (read late, it would see the whole burst at once and send one commit per key).
      const probe = `${base}-g-probe`;
      const [probed] = await testAdapter(testbed.source.bootstrapServers).commitOffsets(probe, [
        { topic, partition: 0, offset: 1, metadata: null },
      ]);
      if (probed?.error !== undefined) throw probed.error;
      await waitFor(
        'the probe commit translated',
        async () =>
          (await lastOnSubject(
            jsm,
            names.stream('translated'),
            names.translated('source', 'target', { group: probe, topic, partition: 0 }),
          )) ?? undefined,
        { timeoutMs: 60_000, intervalMs: 100 },
      );
      const readyMs = since(testStart);

      // Every message stored in the translated stream, in stream order: what each key held over time.
      const translatedHistory = new Map<string, OffsetTranslated[]>();
      let translatedStepsBack = 0;
      const firstStepsBack: string[] = [];
      const opts = consumerOpts();
      opts.orderedConsumer();
      opts.deliverAll();
      opts.callback((error, message) => {
        if (error !== null || message === null) return;
        const event = OffsetTranslated.decode(message.data);
        const key = keyOf(event.group, event.partition);
        const history = translatedHistory.get(key) ?? [];
        const previous = history.at(-1);
        if (previous !== undefined && compareVersions(event.version, previous.version) < 0) {
          translatedStepsBack += 1;
          if (firstStepsBack.length < 5)
            firstStepsBack.push(
              `${key}: ${formatVersion(event.version)} after ${formatVersion(previous.version)}`,
            );
        }
        history.push(event);
        translatedHistory.set(key, history);
      });
      const subscription: JetStreamSubscription = await nc
        .jetstream()
        .subscribe(names.translatedFilter('source', 'target'), opts);
      onTestFinished(() => subscription.unsubscribe());

      // The target's committed offsets of every key, sampled while the burst runs and until the end.
      const target = testAdapter(testbed.target.bootstrapServers);
      const samples = new Map<string, Sample[]>();
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          await Promise.all(
            groups.map(async (group) => {
              for (const c of await target.fetchCommittedOffsets(group, [topic])) {
                const mark = parseCommitMetadata(c.metadata)?.mark;
                if (mark === undefined) continue;
                const key = keyOf(group, c.partition);
                const series = samples.get(key) ?? [];
                const last = series.at(-1);
                if (last?.offset !== c.offset || compareVersions(last.version, mark) !== 0)
                  series.push({ version: mark, offset: c.offset });
                samples.set(key, series);
              }
            }),
          );
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      onTestFinished(async () => {
        sampling = false;
        await sampler;
      });

      // The burst: every group commits its steps one after another, the groups side by side.
      const source = testAdapter(testbed.source.bootstrapServers);
      const burstStart = performance.now();
      await Promise.all(
        groups.map(async (group, g) => {
          for (const offsets of plans[g]!) {
            const answers = await source.commitOffsets(
              group,
              offsets.map((offset, partition) => ({ topic, partition, offset, metadata: null })),
            );
            const failed = answers.find((a) => a.error !== undefined);
            if (failed?.error !== undefined) throw failed.error;
          }
        }),
      );
      const commits = plans.reduce((n, plan) => n + plan.length * PARTITIONS, 0);
      const rewinds = plans.reduce(
        (n, plan) =>
          n + plan.reduce((m, step, i) => m + step.filter((o, p) => i > 0 && o < plan[i - 1]![p]!).length, 0),
        0,
      );
      const burstMs = since(burstStart);

      // The newest version of every key: the collector's event for the key's last (unique) offset.
      const newest = new Map<string, { version: Version; offset: number }>();
      await waitFor(
        'the last commit of every key collected',
        async () => {
          for (const [g, group] of groups.entries()) {
            for (let partition = 0; partition < PARTITIONS; partition++) {
              const key = keyOf(group, partition);
              if (newest.has(key)) continue;
              const message = await lastOnSubject(
                jsm,
                names.stream('committed'),
                names.committed('source', { group, topic, partition }),
              );
              const event = message && OffsetCommitted.decode(message.data);
              const offset = plans[g]!.at(-1)![partition]!;
              if (event?.version === undefined || event.committedOffset !== offset) return undefined;
              newest.set(key, { version: event.version, offset });
            }
          }
          return true;
        },
        { timeoutMs: 90_000, intervalMs: 250 },
      );
      // Every key ends on its newest version: in the translated stream and on the target.
      await waitFor(
        'every key on its newest version in the translated stream and on the target',
        async () => {
          for (const group of groups) {
            const committed = await target.fetchCommittedOffsets(group, [topic]);
            for (let partition = 0; partition < PARTITIONS; partition++) {
              const want = newest.get(keyOf(group, partition))!;
              const message = await lastOnSubject(
                jsm,
                names.stream('translated'),
                names.translated('source', 'target', { group, topic, partition }),
              );
              const translated = message && OffsetTranslated.decode(message.data);
              if (compareVersions(translated?.version, want.version) !== 0) return undefined;
              const onTarget = committed.find((c) => c.partition === partition);
              const mark = parseCommitMetadata(onTarget?.metadata)?.mark;
              if (compareVersions(mark, want.version) !== 0 || onTarget?.offset !== want.offset)
                return undefined;
            }
          }
          return true;
        },
        { timeoutMs: 90_000, intervalMs: 250 },
      );
      sampling = false;
      await sampler;
      const settledMs = since(burstStart);
      const settledAtMs = Date.now();

      // How often the late instance's translation was older than the one already stored.
      const superseded = await waitFor(
        'heartbeats that count the last batches',
        async () => {
          const beats = await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_TRANSLATOR);
          const handled = beats.reduce(
            (n, b) => n + Object.values(b.progress?.eventsByOutcome ?? {}).reduce((a, c) => a + c, 0),
            0,
          );
          // Wait for a heartbeat of each sent after every key was on its newest version.
          const fresh = beats.length === 2 && beats.every((b) => b.sentAtMs > settledAtMs);
          return fresh && handled > 0
            ? Object.fromEntries(beats.map((b) => [b.instanceId, b.progress?.eventsByOutcome ?? {}]))
            : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 100 },
      );
      const supersededCount = Object.values(superseded).reduce((n, o) => n + (o.superseded ?? 0), 0);

      // Where the target went back to an older version, or down without a newer one (a rewind).
      const targetStepsBack: string[] = [];
      for (const [key, series] of samples) {
        series.forEach((s, i) => {
          const previous = series[i - 1];
          if (previous === undefined) return;
          const order = compareVersions(s.version, previous.version);
          if (
            order < 0 ||
            (order === 0 && s.offset !== previous.offset) ||
            (s.offset < previous.offset && order <= 0)
          )
            targetStepsBack.push(
              `${key}: ${formatVersion(s.version)}@${s.offset} after ${formatVersion(previous.version)}@${previous.offset}`,
            );
        });
      }
      const stored = [...translatedHistory.values()].flat();
      const sampled = [...samples.values()].flat();
      console.log(
        `[ordering] set up in ${readyMs} ms; ${commits} commits (${rewinds} rewinds) in ${burstMs} ms, ` +
          `all keys on their newest version ${settledMs} ms after the burst began; ` +
          `${stored.length} translations stored, ${translatedStepsBack} stored after a newer one; ` +
          `${supersededCount} left out for a newer one (${JSON.stringify(superseded)}); ` +
          `${sampled.length} target samples, ${targetStepsBack.length} steps back; proxy ${proxy.bytes.up}/${proxy.bytes.down} bytes up/down`,
      );

      expect(commits).toBeGreaterThanOrEqual(COMMITS);
      expect(rewinds).toBeGreaterThan(0);
      // The translated stream never went back to an older version of a key ...
      expect(firstStepsBack).toEqual([]);
      expect(translatedStepsBack).toBe(0);
      // ... and every translation is exact, at the same offset (records were copied one to one): so on
      // the target a lower offset is a lower source offset.
      expect(stored.every((t) => t.outcome === TranslationOutcome.TRANSLATION_OUTCOME_EXACT)).toBe(true);
      expect(stored.every((t) => t.targetOffset === t.sourceOffset)).toBe(true);
      // The target never went back to an older version, and went down only with a newer one: a rewind.
      expect(targetStepsBack).toEqual([]);
      // The late instance's translations did arrive out of order, and were left out.
      expect(supersededCount).toBeGreaterThan(0);
      // The sampler saw rewinds go through on the target.
      expect(sampled.length).toBeGreaterThan(GROUPS * PARTITIONS);
      expect(
        [...samples.values()].some((series) =>
          series.some((s, i) => i > 0 && s.offset < series[i - 1]!.offset),
        ),
      ).toBe(true);
    },
  );
});
