import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '@offsetsync/runtime';
import {
  formatServicePids,
  sandboxServiceConfigText,
  sandboxServiceSpecs,
  serviceEnv,
  serviceLogName,
  unheardRoles,
} from './sandbox-services.js';
import { SANDBOX_TARGETS } from './sandbox-targets.js';

const servers = {
  kafka: { source: '127.0.0.1:1', target: '127.0.0.1:2', cloud: '127.0.0.1:3' },
  natsUrl: 'nats://127.0.0.1:4',
  subjectPrefix: 'sandbox',
  healthPort: 5,
};
const specs = sandboxServiceSpecs(SANDBOX_TARGETS);

describe('the sandbox services', () => {
  it('are one health and one collector, and a committer and a translator per target', () => {
    expect(specs).toEqual([
      { role: 'health' },
      { role: 'committer', target: 'target' },
      { role: 'committer', target: 'cloud' },
      { role: 'translator', target: 'target' },
      { role: 'translator', target: 'cloud' },
      { role: 'collector' },
    ]);
    expect(specs.map(serviceLogName)).toEqual([
      'health.log',
      'committer-target.log',
      'committer-cloud.log',
      'translator-target.log',
      'translator-cloud.log',
      'collector.log',
    ]);
    expect(formatServicePids(specs.map((s, i) => ({ ...s, pid: 100 + i })))).toBe(
      'health (pid 100), committer of target (pid 101), committer of cloud (pid 102), translator of target (pid 103), translator of cloud (pid 104), collector (pid 105)',
    );
  });

  it('share one config file in which each translator and committer serves its own target', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'offsetsync-sandbox-config-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'offsetsync.yaml');
    await writeFile(file, sandboxServiceConfigText(servers, SANDBOX_TARGETS, specs));
    // Variables of the sandbox's own shell are no settings of the processes it starts.
    const shell = { PATH: '/usr/bin', OFFSETSYNC_TRANSLATOR__TARGET: 'elsewhere' };
    for (const spec of specs) {
      const env = serviceEnv(spec, shell);
      expect(env.PATH).toBe('/usr/bin');
      const config = loadConfig({ file, env });
      expect(config.links.map((l) => l.target)).toEqual(['target', 'cloud']);
      if (spec.role === 'translator') expect(config.translator?.target).toBe(spec.target);
      if (spec.role === 'committer') expect(config.committer?.target).toBe(spec.target);
    }
  });

  it('give each process its own metrics endpoint when Prometheus scrapes them', () => {
    expect(serviceEnv({ role: 'committer', target: 'cloud' }, {}, '127.0.0.1:9100')).toEqual({
      OFFSETSYNC_COMMITTER__TARGET: 'cloud',
      OFFSETSYNC_TELEMETRY__PROMETHEUS__ENABLED: 'true',
      OFFSETSYNC_TELEMETRY__PROMETHEUS__HOST: '127.0.0.1',
      OFFSETSYNC_TELEMETRY__PROMETHEUS__PORT: '9100',
    });
  });

  it('count as heard once every process of a role sent a heartbeat', () => {
    const beat = (role: string, instance: string) => `sandbox.heartbeat.${role}.${instance}`;
    const heard = [
      beat('health', 'h'),
      beat('committer', 'c1'),
      beat('translator', 't1'),
      beat('collector', 'x'),
    ];
    expect(unheardRoles(specs, heard, 'sandbox')).toEqual(['committer', 'translator']);
    expect(
      unheardRoles(specs, [...heard, beat('committer', 'c2'), beat('translator', 't2')], 'sandbox'),
    ).toEqual([]);
  });
});
