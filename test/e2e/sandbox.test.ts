// `offsetsync sandbox` end to end, from the built CLI: it starts its own clusters, NATS, MirrorMaker 2
// and the four services (with --prometheus, Debian's Prometheus scraping them with the chart's alert
// rules), reports the demo group's move, fires the one-sided alert once the committer is stopped, and on
// SIGINT stops every process it started and exits with 0.
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

/** The order of the pids in the sandbox's "running (pids ...)" line. */
const SANDBOX_ROLE_ORDER = ['health', 'committer', 'translator', 'collector'];

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
    'moves the demo group with replayed=0 skipped=0, fires OffsetsyncLinkSourceOnly in its Prometheus when the committer stops, and leaves no process behind after SIGINT',
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

      const moved = await waitFor(
        'the moved-group line',
        () => {
          if (child.exitCode !== null)
            // GiveUp ends the wait at once (waitFor retries other errors until its timeout).
            throw new GiveUp(`the sandbox exited with ${child.exitCode}:\n${output}`);
          return Promise.resolve(
            /^moved group (\S+): replayed=(\d+) skipped=(\d+)$/m.exec(output) ?? undefined,
          );
        },
        { timeoutMs: 300_000, intervalMs: 200 },
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}\noutput so far:\n${output}`);
      });
      console.log(`[sandbox] ${moved[0]} ${Date.now() - began} ms after launch`);
      expect(moved.slice(1)).toEqual(['demo-app', '0', '0']);
      expect(output.match(/^moved group /gm)).toHaveLength(1);

      // The health API stays up and sees both sides of the link: `offsetsync status` against it.
      const address = await waitFor(
        'the health service line',
        () => Promise.resolve(/^\s+health service\s+(\S+:\d+)\s+\(/m.exec(output)?.[1]),
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      const cli = join(REPO_ROOT, 'cli', 'bin', 'offsetsync.js');
      const report = await waitFor(
        'a HEALTHY link in offsetsync status',
        async () => {
          const { stdout } = await promisify(execFile)(process.execPath, [
            cli,
            'status',
            '--json',
            '--address',
            address,
          ]);
          const parsed = JSON.parse(stdout) as { links: { state: string }[]; groups: { group: string }[] };
          return parsed.links[0]?.state === 'HEALTHY' ? parsed : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 1_000 },
      );
      expect(report.links).toHaveLength(1);
      expect(report.groups.some((g) => g.group === 'demo-app')).toBe(true);

      // Kafka source and target, NATS, MirrorMaker, the four services and Prometheus, each leading its
      // own group.
      started = childrenOf(pid);
      expect(started).toHaveLength(9);

      // Stopping the committer leaves the link SOURCE_ONLY; the chart's rule fires after its `for` (1m).
      const prometheusAddress = /^\s+Prometheus\s+http:\/\/(\S+:\d+)\s/m.exec(output)?.[1];
      expect(prometheusAddress, output).toBeDefined();
      const pids = /running \(pids ([\d, ]+);/.exec(output)?.[1]?.split(', ').map(Number);
      const committerPid = pids?.[SANDBOX_ROLE_ORDER.indexOf('committer')];
      expect(committerPid !== undefined && started.includes(committerPid), output).toBe(true);
      expect(await firingAlerts(prometheusAddress!)).not.toContainEqual(
        expect.objectContaining({ alertname: 'OffsetsyncLinkSourceOnly' }),
      );
      const committerStopped = Date.now();
      process.kill(committerPid!, 'SIGTERM');
      const fired = await waitFor(
        'OffsetsyncLinkSourceOnly firing in the sandbox Prometheus',
        async () =>
          (await firingAlerts(prometheusAddress!)).find((a) => a.alertname === 'OffsetsyncLinkSourceOnly'),
        { timeoutMs: 180_000, intervalMs: 1_000 },
      );
      console.log(
        `[sandbox] OffsetsyncLinkSourceOnly firing ${Date.now() - committerStopped} ms after the committer stopped`,
      );
      expect(fired).toMatchObject({ source: 'source', target: 'target', severity: 'critical' });
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
