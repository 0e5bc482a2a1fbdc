import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ALERT_RULES_FILE, prometheusConfig } from './sandbox-prometheus.js';

describe('the sandbox Prometheus config', () => {
  it('scrapes each role as a job of its own, every process of it a target, and loads the chart’s alert rules', () => {
    const config = parse(
      prometheusConfig(
        [
          { role: 'health', address: '127.0.0.1:1001' },
          { role: 'committer', address: '127.0.0.1:1002' },
          { role: 'committer', address: '127.0.0.1:1003' },
        ],
        ALERT_RULES_FILE,
      ),
    ) as Record<string, unknown>;
    expect(config).toEqual({
      global: { scrape_interval: '2s', evaluation_interval: '2s' },
      rule_files: [ALERT_RULES_FILE],
      scrape_configs: [
        { job_name: 'offsetsync-health', static_configs: [{ targets: ['127.0.0.1:1001'] }] },
        {
          job_name: 'offsetsync-committer',
          static_configs: [{ targets: ['127.0.0.1:1002', '127.0.0.1:1003'] }],
        },
      ],
    });
    expect(existsSync(ALERT_RULES_FILE), ALERT_RULES_FILE).toBe(true);
  });
});
