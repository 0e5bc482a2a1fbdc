// The chart's alerts (deploy/helm/offsetsync/files/offsetsync-alerts.rules.yaml): valid for promtool, its
// unit tests (offsetsync-alerts.test.yaml) pass and cover every alert, each alert has a severity and says
// which link or instance it is about; the PrometheusRule and dashboard templates ship these very files.
// promtool comes with Debian's `prometheus` package (.ci/run installs it).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO_ROOT } from '../infra/testbed.js';

const CHART = join(REPO_ROOT, 'deploy', 'helm', 'offsetsync');
const FILES = join(CHART, 'files');
const RULES = 'offsetsync-alerts.rules.yaml';
const RULE_TESTS = 'offsetsync-alerts.test.yaml';

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** Runs promtool in the files folder; resolves with its exit code and output, never rejects for a failure. */
async function promtool(...args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)('promtool', args, { cwd: FILES });
    return { code: 0, output: stdout + stderr };
  } catch (error: unknown) {
    const failure = error as { code?: number | string; stdout?: string; stderr?: string };
    if (failure.code === 'ENOENT')
      throw new Error('promtool is missing: `apt-get install prometheus` (.ci/run installs it)');
    return { code: Number(failure.code), output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` };
  }
}

function rules(): Rule[] {
  const file = parse(readFileSync(join(FILES, RULES), 'utf8')) as { groups: { rules: Rule[] }[] };
  return file.groups.flatMap((g) => g.rules);
}

describe('alert rules', () => {
  it('pass `promtool check rules`', async () => {
    const { code, output } = await promtool('check', 'rules', RULES);
    expect(code, output).toBe(0);
    expect(output).toContain(`SUCCESS: ${rules().length} rules found`);
  });

  it('pass their promtool unit tests, which test every alert', async () => {
    const { code, output } = await promtool('test', 'rules', RULE_TESTS);
    expect(code, output).toBe(0);
    const tests = parse(readFileSync(join(FILES, RULE_TESTS), 'utf8')) as {
      tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const firing = new Set(
      tests.tests.flatMap((t) =>
        t.alert_rule_test.filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname),
      ),
    );
    const quiet = new Set(
      tests.tests.flatMap((t) =>
        t.alert_rule_test.filter((a) => a.exp_alerts.length === 0).map((a) => a.alertname),
      ),
    );
    for (const rule of rules()) {
      expect(firing, `a test case where ${rule.alert} fires`).toContain(rule.alert);
      expect(quiet, `a test case where ${rule.alert} does not fire yet`).toContain(rule.alert);
    }
  });

  it('are the alerts of issue 17, each with a severity and a summary and description naming what it is about', () => {
    expect(rules().map((r) => r.alert)).toEqual([
      'OffsetsyncLinkSourceOnly',
      'OffsetsyncLinkTargetOnly',
      'OffsetsyncLinkStalled',
      'OffsetsyncLinkLagging',
      'OffsetsyncLinkDown',
      'OffsetsyncTranslationsPendingTooLong',
      'OffsetsyncCommitsFailing',
      'OffsetsyncUnknownOffsetsRecords',
      'OffsetsyncInstanceMissing',
    ]);
    for (const rule of rules()) {
      expect(['critical', 'warning'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toMatch(/\{\{ \$labels\.(source|instance|instance_id)/);
      expect(rule.annotations?.description, rule.alert).toMatch(/\{\{ \$labels\./);
    }
  });

  it('ship in the chart as they are: the PrometheusRule and the dashboard ConfigMap read the files', () => {
    const rule = readFileSync(join(CHART, 'templates', 'prometheusrule.yaml'), 'utf8');
    expect(rule).toContain('{{- if .Values.monitoring.prometheusRule.enabled }}');
    expect(rule).toContain('.Values.monitoring.prometheusRule.labels');
    expect(rule).toContain(`{{- .Files.Get "files/${RULES}" | nindent 2 }}`);
    const dashboard = readFileSync(join(CHART, 'templates', 'grafana-dashboard.yaml'), 'utf8');
    expect(dashboard).toContain('{{- if .Values.monitoring.dashboard.enabled }}');
    expect(dashboard).toContain('.Values.monitoring.dashboard.labels');
    expect(dashboard).toContain('{{- .Files.Get "files/offsetsync-dashboard.json" | nindent 4 }}');
    // The rules file is one YAML document of groups: indented under `spec:` it is the PrometheusRule's spec.
    expect(readFileSync(join(FILES, RULES), 'utf8')).not.toMatch(/^---/m);
  });
});
