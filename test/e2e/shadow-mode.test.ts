// Shadow mode (links[].mode observe) against the real services: the committer decides every commit as
// usual and commits nothing, checked with the target's own OffsetFetch and ListGroups; health, `status`
// and `cutover --dry-run` show per partition what it would commit and what a move now would replay or
// skip. A committer started again with mode commit then applies the current state (it reads every
// translation it never committed, not only new ones), and the groups move exactly.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { PartitionSyncState } from '@offsetsync/contracts';
import { startReplicator, startService } from '@offsetsync/harness';
import { freePort } from '../infra/free-port.js';
import { waitFor } from '../infra/wait.js';
import { runCli } from '../support/cli.js';
import { testConfig } from '../support/config.js';
import { healthClients } from '../support/health-client.js';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');
const RECORDS = 300;
/** Records the target's topic holds of its own before the copies: its offsets are the source's + OWN. */
const OWN = 15;
/** Where each group committed on the source. */
const COMMITS = [120, 200] as const;

describe('shadow mode', () => {
  it(
    'commits nothing while observing, shows what it would commit, and applies the current state once switched to commit',
    { timeout: 240_000 },
    async () => {
      const topic = uniqueName('shadow');
      const apps = COMMITS.map((offset) => ({ group: uniqueName('shadow-app'), offset }));
      const groups = apps.map((a) => a.group);
      const source = kafkaClient(testbed.source.bootstrapServers);
      const target = kafkaClient(testbed.target.bootstrapServers);
      const sourceAdmin = await connectedAdmin(source);
      const targetAdmin = await connectedAdmin(target);
      for (const admin of [sourceAdmin, targetAdmin])
        await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
      const write = async (client: typeof source, values: string[]) => {
        const producer = client.producer();
        await producer.connect();
        await producer.send({ topic, messages: values.map((value, i) => ({ key: `k${i % 5}`, value })) });
        await producer.disconnect();
      };
      await write(
        source,
        Array.from({ length: RECORDS }, (_, i) => `id:${i}`),
      );
      await write(
        target,
        Array.from({ length: OWN }, (_, i) => `own:${i}`),
      );
      const replicator = await startReplicator({
        source: testbed.source,
        target: testbed.target,
        topic,
        createTopic: false,
      });
      await replicator.waitUntilCaughtUp(60_000);

      const healthPort = await freePort();
      const config = (mode: 'commit' | 'observe') =>
        testConfig(testbed, {
          links: [{ source: 'source', target: 'target', mode }],
          collector: {
            cluster: 'source',
            groups: { include: groups.map((g) => `^${g}$`) },
            fetchMaxWaitMs: '20ms',
          },
          translator: { target: 'target', pendingRetryMinMs: '100ms', pendingRetryMaxMs: '1s' },
          committer: { target: 'target' },
          health: { grpc: { host: '127.0.0.1', port: healthPort } },
        });
      const observing = config('observe');
      // One deployment: the committing config differs only in the link's mode.
      const committing = { ...observing, links: [{ source: 'source', target: 'target', mode: 'commit' }] };
      await startService('collector', observing);
      await startService('health', observing);
      await startService('translator', observing);
      const observer = await startService('committer', observing);
      for (const { group, offset } of apps) {
        await sourceAdmin.setOffsets({
          groupId: group,
          topic,
          partitions: [{ partition: 0, offset: String(offset) }],
        });
      }

      // Health: OBSERVED with the counterpart each would get, nothing committed, nothing to replay or skip.
      const client = healthClients(`127.0.0.1:${healthPort}`);
      for (const { group, offset } of apps) {
        const row = await waitFor(
          `${group} OBSERVED in health`,
          async () => {
            const p = (await client.getGroup('source', 'target', group)).partitions[0];
            return p?.state === PartitionSyncState.PARTITION_SYNC_STATE_OBSERVED ? p : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 200 },
        );
        expect(row).toMatchObject({
          sourceOffset: offset,
          targetOffset: -1,
          wouldCommitOffset: offset + OWN,
          replayIfMoved: 0,
          skipIfMoved: 0,
        });
      }

      // The target, asked itself: no committed offset for either group, and no group offsetsync created.
      const fetched = async (group: string) =>
        Number(
          (await targetAdmin.fetchOffsets({ groupId: group, topics: [topic] }))[0]?.partitions[0]?.offset ??
            -1,
        );
      for (const group of groups) expect(await fetched(group)).toBe(-1);
      const listed = (await targetAdmin.listGroups()).groups.map((g) => g.groupId);
      expect(listed.filter((g) => groups.includes(g))).toEqual([]);

      // status: the would-commit offset in parentheses, OBSERVED; JSON with the same figures.
      const address = `127.0.0.1:${healthPort}`;
      const table = await runCli(['status', '--address', address, '--group', groups[0]!]);
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(
        new RegExp(`${topic}/0\\s+120\\s+\\(135\\)\\s+yes\\s+.*\\s0\\s+0\\s+OBSERVED`),
      );
      const json = JSON.parse(
        (await runCli(['status', '--address', address, '--json', '--group', groups[1]!])).stdout,
      ) as {
        links: Array<{ observing: boolean; reason: string }>;
        groups: Array<{
          wouldCommitOffset: number;
          targetOffset: number;
          skipIfMoved: number;
          state: string;
        }>;
      };
      expect(json.links).toEqual([
        expect.objectContaining({
          observing: true,
          reason: expect.stringContaining('the link observes: nothing is committed on "target"') as unknown,
        }),
      ]);
      expect(json.groups).toEqual([
        expect.objectContaining({
          wouldCommitOffset: 215,
          targetOffset: -1,
          skipIfMoved: 0,
          state: 'OBSERVED',
        }),
      ]);

      // cutover: refused at once on an observing link; --dry-run shows the plan.
      const dir = await mkdtemp(join(tmpdir(), 'offsetsync-shadow-'));
      const configFile = join(dir, 'offsetsync.yaml');
      await writeFile(configFile, stringify(observing));
      const cutover = [
        'cutover',
        '-c',
        configFile,
        '--group',
        groups[0]!,
        '--from',
        'source',
        '--to',
        'target',
      ];
      const refused = await runCli([...cutover, '--json']);
      expect(refused.code).toBe(1);
      expect(
        (JSON.parse(refused.stdout) as { blocks: { code: string }[] }).blocks.map((b) => b.code),
      ).toEqual(['OBSERVED']);
      const dryRun = await runCli([...cutover, '--dry-run', '--json', '--address', address]);
      expect(dryRun.code).toBe(1);
      const plan = JSON.parse(dryRun.stdout) as {
        blocks: { code: string; message: string }[];
        plan: Array<{
          partition: number;
          sourceOffset: number;
          wouldCommitOffset: number;
          replayIfMoved: number;
          skipIfMoved: number;
          state: string;
        }>;
      };
      expect(plan.blocks.map((b) => b.code)).toEqual(['OBSERVED']);
      expect(plan.plan).toEqual([
        expect.objectContaining({
          partition: 0,
          sourceOffset: 120,
          wouldCommitOffset: 135,
          replayIfMoved: 0,
          skipIfMoved: 0,
          state: 'OBSERVED',
        }),
      ]);

      // Switched to commit: the committer applies what it observed, without a new commit on the source.
      await observer.stop();
      const started = Date.now();
      await startService('committer', committing);
      for (const { group, offset } of apps) {
        await waitFor(
          `${group} committed on the target`,
          async () => ((await fetched(group)) === offset + OWN ? true : undefined),
          { timeoutMs: 60_000, intervalMs: 100 },
        );
      }
      console.log(
        `[shadow] switched to commit: both groups applied on the target ${Date.now() - started} ms after the committer started`,
      );

      // The groups move exactly: a consumer on the target reads on from the first record not consumed.
      for (const { group, offset } of apps) {
        const consumer = target.consumer({ groupId: group });
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        const read: string[] = [];
        const want = RECORDS - offset;
        await new Promise<void>((resolve, reject) => {
          consumer
            .run({
              autoCommit: false,
              eachMessage: ({ message }) => {
                read.push(message.value!.toString());
                if (read.length === want) resolve();
                return Promise.resolve();
              },
            })
            .catch(reject);
        });
        await consumer.disconnect();
        const expected = Array.from({ length: want }, (_, k) => `id:${offset + k}`);
        const replayed = read.filter((id) => !expected.includes(id)).length;
        const skipped = expected.filter((id) => !read.includes(id)).length;
        console.log(`[shadow] ${group} moved after the switch: replayed=${replayed} skipped=${skipped}`);
        expect({ replayed, skipped }).toEqual({ replayed: 0, skipped: 0 });
      }
    },
  );
});
