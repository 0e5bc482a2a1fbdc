// Health during an outage of NATS itself: nats-server stops while every service and health run. Health
// can hear no heartbeat then, so it must not report a side of the link missing (before its own
// connection was taken into account it said TARGET_ONLY first: the collector's heartbeat went quiet
// first). It keeps the state it last knew and says that it cannot hear; after nats-server is back, the
// link is HEALTHY again without a detour through a one-sided state.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { LinkState } from '@offsetsync/contracts';
import { startService } from '@offsetsync/harness';
import { restartNatsServer, startNatsServer, stopProcess } from '@offsetsync/testbed';
import { freePort } from '../infra/free-port.js';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { healthClients } from '../support/health-client.js';

const testbed = inject('testbed');

describe('health during a NATS outage', () => {
  it('blames no service while nats-server is down, says it cannot hear, and is HEALTHY again after', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'offsetsync-nats-outage-'));
    let nats = await startNatsServer({ dir });
    onTestFinished(async () => {
      await stopProcess(nats.pid);
      await rm(dir, { recursive: true, force: true });
    });
    const port = await freePort();
    const base = testConfig(testbed, {
      collector: { cluster: 'source' },
      translator: { target: 'target' },
      committer: { target: 'target' },
      health: { grpc: { host: '127.0.0.1', port }, missingAfterHeartbeats: 3 },
    });
    // Heartbeats every 500 ms: a side is missing after 1.5 s of silence.
    const config = { ...base, nats: { ...base.nats, servers: [nats.url] } };
    await Promise.all(
      (['collector', 'translator', 'committer', 'health'] as const).map((role) => startService(role, config)),
    );
    const client = healthClients(`127.0.0.1:${port}`);
    const link = async () => (await client.listLinks()).links[0];
    await waitFor(
      'the link HEALTHY',
      async () => ((await link())?.state === LinkState.LINK_STATE_HEALTHY ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 200 },
    );

    await stopProcess(nats.pid);
    // Three times the time after which a silent side would count as missing.
    const seen: Array<{ state: string; reason: string }> = [];
    for (const until = Date.now() + 4_500; Date.now() < until;) {
      const l = await link();
      if (l !== undefined) seen.push({ state: LinkState[l.state], reason: l.reason });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const states = [...new Set(seen.map((s) => s.state))];
    console.log(`[nats-outage] states while nats-server was down: ${states.join(', ')}`);
    expect(states).toEqual(['LINK_STATE_HEALTHY']);
    expect(seen.at(-1)?.reason).toContain('health has not heard from NATS');

    nats = await restartNatsServer(nats);
    const after: string[] = [];
    const back = Date.now();
    await waitFor(
      'the link HEALTHY again and heard',
      async () => {
        const l = await link();
        if (l !== undefined) after.push(LinkState[l.state]);
        return l?.state === LinkState.LINK_STATE_HEALTHY && !l.reason.includes('NATS') ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    console.log(
      `[nats-outage] heard again ${Date.now() - back} ms after nats-server was back; states meanwhile: ${[...new Set(after)].join(', ')}`,
    );
    expect([...new Set(after)]).toEqual(['LINK_STATE_HEALTHY']);
  });
});
