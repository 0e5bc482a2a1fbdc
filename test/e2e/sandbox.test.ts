// `offsetsync sandbox` end to end, from the built CLI: it starts its own clusters (a source and two
// targets), NATS, a MirrorMaker 2 per target (the one to cloud with MirrorMaker's default topic names) and
// the offsetsync processes (with --prometheus, Debian's Prometheus scraping them with the chart's alert
// rules), reports the demo group's positions side by side and its move to each target, fires the
// one-sided alert for the link whose committer is stopped, and on SIGINT stops every process it started
// and exits with 0.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { GiveUp, isAlive, isGroupAlive, REPO_ROOT, waitFor } from '@offsetsync/testbed';

/** Pids of the direct children of `pid`, read from /proc. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name in field 2 may hold spaces; the fields after its closing parenthesis do not.
      const stat = readFileSync(join('/proc', entry, 'stat'), 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // The process ended while the folder was read.
    }
  }
  return children;
}

/** The labels of every firing alert, from Prometheus' HTTP API. */
async function firingAlerts(address: string): Promise<Record<string, string>[]> {
  const response = await fetch(`http://${address}/api/v1/alerts`);
  if (!response.ok) throw new Error(`GET /api/v1/alerts: ${response.status}`);
  const body = (await response.json()) as {
    data: { alerts: { state: string; labels: Record<string, string> }[] };
  };
  return body.data.alerts.filter((a) => a.state === 'firing').map((a) => a.labels);
}

describe('offsetsync sandbox', () => {
  it(
    'moves the demo group to target and to cloud (source.<topic>) with replayed=0 skipped=0 at three different offsets, fires OffsetsyncLinkSourceOnly for the link whose committer stops, and leaves no process behind after SIGINT',
    { timeout: 480_000 },
    async () => {
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !name.startsWith('OFFSETSYNC_')),
      );
      const began = Date.now();
      const child = spawn(
        process.execPath,
        [join(REPO_ROOT, 'cli', 'bin', 'offsetsync.js'), 'sandbox', '--records', '1000', '--prometheus'],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
          env,
        },
      );
      const pid = child.pid!;
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      );
      let started: number[] = [];
      onTestFinished(async () => {
        // Whatever happened above, nothing may outlive the test.
        if (isAlive(pid)) child.kill('SIGKILL');
        for (const p of started) if (isGroupAlive(p)) process.kill(-p, 'SIGKILL');
        await exited;
      });

      const movedLine = /^moved group (\S+) to (\S+): replayed=(\d+) skipped=(\d+)$/gm;
      const moved = await waitFor(
        'a moved-group line for each target',
        () => {
          if (child.exitCode !== null)
            // GiveUp ends the wait at once (waitFor retries other errors until its timeout).
            throw new GiveUp(`the sandbox exited with ${child.exitCode}:\n${output}`);
          const lines = [...output.matchAll(movedLine)];
          return Promise.resolve(lines.length >= 2 ? lines : undefined);
        },
        { timeoutMs: 300_000, intervalMs: 200 },
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}\noutput so far:\n${output}`);
      });
      for (const line of moved) console.log(`[sandbox] ${line[0]}`);
      console.log(`[sandbox] both moves reported ${Date.now() - began} ms after launch`);
      expect(
        moved.map((m) => m.slice(1)),
        output,
      ).toEqual([
        ['demo-app', 'target', '0', '0'],
        ['demo-app', 'cloud', '0', '0'],
      ]);

      // The position offsetsync committed, per partition on the three clusters: cloud's copy bears
      // MirrorMaker's default name, and each cluster holds the record the group stopped at at another offset.
      const positions = [
        ...output.matchAll(/partition (\d+): source (\S+) (\d+) -> target (\S+) (\d+), cloud (\S+) (\d+)$/gm),
      ];
      for (const line of positions) console.log(`[sandbox] ${line[0]}`);
      expect(
        positions.map((p) => p[1]),
        output,
      ).toEqual(['0', '1', '2']);
      for (const [, , sourceTopic, source, targetTopic, target, cloudTopic, cloud] of positions) {
        expect([sourceTopic, targetTopic, cloudTopic]).toEqual([
          'demo-orders',
          'demo-orders',
          'source.demo-orders',
        ]);
        expect(new Set([source, target, cloud]).size, `${source}, ${target}, ${cloud}`).toBe(3);
      }

      // The health API stays up and sees both sides of both links: `offsetsync status` against it.
      const address = await waitFor(
        'the health service line',
        () => Promise.resolve(/^\s+health service\s+(\S+:\d+)\s+\(/m.exec(output)?.[1]),
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      const cli = join(REPO_ROOT, 'cli', 'bin', 'offsetsync.js');
      const report = await waitFor(
        'both links HEALTHY in offsetsync status',
        async () => {
          const { stdout } = await promisify(execFile)(process.execPath, [
            cli,
            'status',
            '--json',
            '--address',
            address,
          ]);
          const parsed = JSON.parse(stdout) as {
            links: { source: string; target: string; state: string }[];
            groups: { target: string; group: string; targetTopic: string }[];
          };
          return parsed.links.length === 2 && parsed.links.every((l) => l.state === 'HEALTHY')
            ? parsed
            : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 1_000 },
      );
      expect(report.links.map((l) => `${l.source}->${l.target}`).sort()).toEqual([
        'source->cloud',
        'source->target',
      ]);
      const demoGroup = report.groups.filter((g) => g.group === 'demo-app');
      expect(new Set(demoGroup.map((g) => `${g.target} ${g.targetTopic}`))).toEqual(
        new Set(['target demo-orders', 'cloud source.demo-orders']),
      );

      // Kafka source, target and cloud, NATS, a MirrorMaker per target, six offsetsync processes
      // (health, collector, a committer and a translator per target) and Prometheus, each leading its own
      // group.
      started = childrenOf(pid);
      expect(started).toHaveLength(13);

      // Stopping the committer leaves the link SOURCE_ONLY; the chart's rule fires after its `for` (1m).
      const prometheusAddress = /^\s+Prometheus\s+http:\/\/(\S+:\d+)\s/m.exec(output)?.[1];
      expect(prometheusAddress, output).toBeDefined();
      const committerPid = Number(/committer of target \(pid (\d+)\)/.exec(output)?.[1]);
      expect(started.includes(committerPid), output).toBe(true);
      expect(await firingAlerts(prometheusAddress!)).not.toContainEqual(
        expect.objectContaining({ alertname: 'OffsetsyncLinkSourceOnly' }),
      );
      const committerStopped = Date.now();
      process.kill(committerPid, 'SIGTERM');
      const fired = await waitFor(
        'OffsetsyncLinkSourceOnly firing in the sandbox Prometheus',
        async () => {
          const alerts = await firingAlerts(prometheusAddress!);
          return alerts.some((a) => a.alertname === 'OffsetsyncLinkSourceOnly') ? alerts : undefined;
        },
        { timeoutMs: 180_000, intervalMs: 1_000 },
      );
      console.log(
        `[sandbox] OffsetsyncLinkSourceOnly firing ${Date.now() - committerStopped} ms after the committer of target stopped`,
      );
      // For the link whose committer stopped only: cloud's committer still runs.
      expect(fired.filter((a) => a.alertname === 'OffsetsyncLinkSourceOnly')).toEqual([
        expect.objectContaining({ source: 'source', target: 'target', severity: 'critical' }),
      ]);
      expect(Date.now() - committerStopped).toBeGreaterThanOrEqual(60_000);

      const stopping = Date.now();
      child.kill('SIGINT');
      const { code, signal } = await Promise.race([
        exited,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`no exit after SIGINT:\n${output}`)), 90_000),
        ),
      ]);
      console.log(`[sandbox] stopped ${Date.now() - stopping} ms after SIGINT`);
      expect({ code, signal }).toEqual({ code: 0, signal: null });
      expect(started.filter((p) => isAlive(p) || isGroupAlive(p))).toEqual([]);
      expect(output).toContain('sandbox stopped');
    },
  );
});
