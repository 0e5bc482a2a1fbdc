// Writes docs/configuration.md, the configuration reference, from the config schema's own descriptions
// (describeConfigSchema). `npm run docs:config` runs it; test/unit/config-docs.test.ts fails when the file
// in the repository differs from what this renders.
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { describeConfigSchema, retiredSettings, type ConfigFieldDescription } from '@offsetsync/runtime';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Where the reference is written. */
export const CONFIGURATION_DOC = join(ROOT, 'docs/configuration.md');

const SECTION_INTROS: Record<string, string> = {
  instance: 'Identity of the process.',
  clusters: 'The Kafka clusters, by alias. Links and the service sections refer to clusters by alias.',
  links:
    "Source -> target pairs: offsets committed on the source are distributed to the target. `topicNames` says how the link's replicator names the topics on the target: the same names (`identity`, the default), MirrorMaker 2's default policy (`mirrormaker2`: `orders` from `onprem` is `onprem.orders`; `sourceAlias` is the source's alias in MirrorMaker's own configuration when it differs from offsetsync's), or a `map` of source to target names, where a topic not listed is not replicated: its commits are refused (`TOPIC_NOT_REPLICATED`), never guessed. The translator looks for the records, and the committer commits, under the target's name; `status` and `cutover` show both. `groups` and `topics` filter per link, within what the collector passes on: a group a link excludes is never translated for that target (counted as `excluded`), shows as `EXCLUDED` in `status` with the filter named, and `cutover` to that target refuses it at once.",
  nats: 'The NATS server with JetStream that carries every event between the services.',
  collector: 'Present where a collector runs (source side); `cluster` names the source.',
  translator: 'Present where a translator runs; `target` names the target cluster it translates for.',
  committer: 'Present where a committer runs (target side); `target` names the target cluster.',
  health: 'Present where the health service runs.',
  probes: 'The grpc.health.v1 endpoint every service serves for liveness and readiness probes.',
  heartbeat: 'Heartbeats every instance publishes for the health service.',
  telemetry: 'Metrics and traces.',
  logging: 'Logs (JSON lines on standard output).',
};

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function row(field: ConfigFieldDescription): string {
  const setting = `\`${field.path}\``;
  const type = cell(field.type) + (field.secret ? ' (secret)' : '');
  const defaultText =
    field.default !== undefined ? `\`${cell(field.default)}\`` : field.required ? 'required' : '-';
  const env = field.env !== undefined ? `\`${field.env}\`` : 'with the enclosing list';
  return `| ${setting} | ${type} | ${defaultText} | ${env} | ${cell(field.description)} |`;
}

/** The configuration reference as Markdown, formatted with the project's Prettier settings. */
export async function renderConfigurationDoc(): Promise<string> {
  const sections = new Map<string, ConfigFieldDescription[]>();
  for (const field of describeConfigSchema()) {
    const top = field.path.split(/[.[]/)[0] ?? field.path;
    sections.set(top, [...(sections.get(top) ?? []), field]);
  }
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from packages/runtime/src/config/schema.ts by `npm run docs:config`; do not edit. -->',
    '',
    'Every service reads one YAML file, named by `--config <file>` or the environment variable',
    '`OFFSETSYNC_CONFIG`. Each setting can also be given as an environment variable, which wins over the',
    'file: `OFFSETSYNC_` followed by the path in upper case, `__` between levels, camelCase words split by',
    '`_` (`nats.connectTimeoutMs` is `OFFSETSYNC_NATS__CONNECT_TIMEOUT_MS`). A cluster alias appears',
    'upper-cased with `-` as `_` (`<ALIAS>` below). Lists are comma-separated in the environment, lists of',
    'objects are JSON. Durations accept `250ms`, `5s`, `2m`, `1h` or a number of milliseconds.',
    '',
    'The configuration is checked completely at start-up: every problem is listed at once and the service',
    'exits with code 2; nothing is corrected silently. Secret settings are redacted in logs.',
    '',
    '### Variables with the prefix that are not settings',
    '',
    'An `OFFSETSYNC_*` variable that names no setting is refused (exit code 2, the problem names it), so a',
    'mistyped setting is never lost. A variable that names a setting is always read as one. Only variables',
    'that cannot be the name of a setting are skipped:',
    '',
    "- The project's own tool variables: `OFFSETSYNC_TESTBED`, `OFFSETSYNC_TESTBED_FILE` and",
    '  `OFFSETSYNC_INFRA_CACHE` (the test bed, tests and benchmarks read them), exactly these names.',
    '- Kubernetes service links. Kubernetes gives every pod variables for each Service of its namespace',
    '  (unless the pod sets `enableServiceLinks: false`, as the Helm chart does). A Service named',
    '  `offsetsync-health` yields `OFFSETSYNC_HEALTH_SERVICE_HOST`, `OFFSETSYNC_HEALTH_SERVICE_PORT`,',
    '  `OFFSETSYNC_HEALTH_SERVICE_PORT_<PORT NAME>`, `OFFSETSYNC_HEALTH_PORT`,',
    '  `OFFSETSYNC_HEALTH_PORT_<N>_<PROTO>` and `OFFSETSYNC_HEALTH_PORT_<N>_<PROTO>_PROTO`, `_PORT` and',
    '  `_ADDR` (`PROTO` is `TCP`, `UDP` or `SCTP`). Such a variable is skipped when all of these hold: its',
    '  name has none of the `__` that separate the levels of every setting below the top level; the',
    "  Service's `<NAME>_SERVICE_HOST` is set to an IP address (Kubernetes always sets it); and its value is",
    '  exactly what Kubernetes writes there for that address (`tcp://10.0.0.1:9090` for `_PORT`, a port',
    '  number for `_SERVICE_PORT`, `tcp` for `_PROTO`, ...). So `OFFSETSYNC_PROBES_PORT=8080`, one `_` short',
    '  of `OFFSETSYNC_PROBES__PORT`, is still refused, and the problem says why it was not taken for a',
    '  service link. A Service whose name contains `--` gives names with `__` and is refused: such pods need',
    '  `enableServiceLinks: false`.',
  ];
  for (const [name, fields] of sections) {
    lines.push('', `## ${name}`, '');
    const intro = SECTION_INTROS[name];
    if (intro !== undefined) lines.push(intro, '');
    lines.push(
      '| Setting | Type | Default | Environment variable | Description |',
      '| --- | --- | --- | --- | --- |',
    );
    lines.push(...fields.map(row));
  }
  lines.push(
    '',
    '## Retired settings',
    '',
    'Settings of earlier releases. A configuration that still sets one is refused at start-up, and the',
    'problem says what to write instead.',
    '',
    '| Setting | Environment variable | Instead |',
    '| --- | --- | --- |',
    ...retiredSettings().map((r) => `| \`${r.path}\` | \`${r.env}\` | ${cell(r.instead)} |`),
    '',
  );
  const options = (await resolveConfig(CONFIGURATION_DOC)) ?? {};
  return format(lines.join('\n'), { ...options, filepath: CONFIGURATION_DOC });
}

async function main(): Promise<void> {
  writeFileSync(CONFIGURATION_DOC, await renderConfigurationDoc());
  console.log(`wrote ${CONFIGURATION_DOC}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
