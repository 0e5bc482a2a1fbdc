import type { z } from 'zod';
import type { ConfigProblem } from '@offsetsync/contracts';
import { CONFIG_FILE_ENV, ENV_PREFIX, SEPARATOR, TOOL_ENV_VARIABLES, toEnvSegment } from './env-names.js';
import { OffsetSyncConfigSchema } from './schema.js';
import { retiredEnvMessage } from './retired-settings.js';
import { kubernetesServiceLink } from './service-link-env.js';
import { inspectSchema, type LeafKind } from './schema-introspection.js';

/**
 * Environment overrides: `OFFSETSYNC_<PATH>` where path segments are separated by `__` and each segment is
 * a camelCase key in SCREAMING_SNAKE (`OFFSETSYNC_NATS__CONNECT_TIMEOUT_MS`). Map keys (cluster aliases)
 * are written upper-case with `-` as `_` (`OFFSETSYNC_CLUSTERS__EU_WEST__BOOTSTRAP_SERVERS` sets
 * `clusters.eu-west.bootstrapServers`). Names are resolved by walking the schema, so a name that matches
 * no setting is reported instead of ignored.
 *
 * Limitation: an alias containing `--` or ending in `-` cannot be addressed, because its name would contain
 * the `__` separator.
 */

/** A resolved environment variable name. */
export interface ResolvedEnvName {
  /** Path of the setting in the configuration. */
  readonly path: readonly string[];
  /** How the value is parsed. */
  readonly kind: LeafKind;
  /** Allowed values of `literal` leaves. */
  readonly values: readonly unknown[];
}

/**
 * Resolves an environment variable name to the setting it names, or explains why it names none.
 * `name` must start with {@link ENV_PREFIX}.
 */
export function resolveEnvName(
  name: string,
  schema: z.ZodType = OffsetSyncConfigSchema,
): { ok: true; resolved: ResolvedEnvName } | { ok: false; message: string } {
  if (!name.startsWith(ENV_PREFIX)) return { ok: false, message: `does not start with ${ENV_PREFIX}` };
  const segments = name.slice(ENV_PREFIX.length).split(SEPARATOR);
  const path: string[] = [];
  let current = schema;
  for (const [index, segment] of segments.entries()) {
    const node = inspectSchema(current).node;
    if (segment === '' || !/^[A-Z0-9_]+$/.test(segment)) {
      return { ok: false, message: `malformed segment ${JSON.stringify(segment)} in ${name}` };
    }
    if (node.type === 'object') {
      const entry = Object.entries(node.shape).find(([key]) => toEnvSegment(key) === segment);
      if (entry === undefined) {
        const where = path.length === 0 ? 'at the top level' : `under ${path.join('.')}`;
        const known = Object.keys(node.shape).map(toEnvSegment).join(', ');
        return { ok: false, message: `unknown setting ${segment} ${where} (known: ${known})` };
      }
      path.push(entry[0]);
      current = entry[1];
    } else if (node.type === 'record') {
      path.push(segment.toLowerCase().replace(/_/g, '-'));
      current = node.value;
    } else {
      const leafPath = path.join('.');
      return {
        ok: false,
        message: `${leafPath} is a single setting; nothing can follow it (${segments.slice(index).join(SEPARATOR)})`,
      };
    }
  }
  const node = inspectSchema(current).node;
  if (node.type !== 'leaf') {
    return {
      ok: false,
      message: `${path.join('.') || 'the top level'} is a section, not a setting; name one of its fields`,
    };
  }
  return { ok: true, resolved: { path, kind: node.kind, values: node.values } };
}

/**
 * Parses an environment value according to the leaf kind. Only the syntax of the environment is handled
 * here (numbers, booleans, lists, JSON); ranges and formats are left to the schema.
 */
export function parseEnvValue(
  raw: string,
  leaf: Pick<ResolvedEnvName, 'kind' | 'values'>,
): { ok: true; value: unknown } | { ok: false; message: string } {
  const text = raw.trim();
  switch (leaf.kind) {
    case 'string':
    case 'enum':
      return { ok: true, value: raw };
    case 'integer':
    case 'number':
      return parseNumber(text);
    case 'duration':
      // A bare number means milliseconds, as in the file; anything else goes to the duration parser.
      return /^\d+$/.test(text) ? parseNumber(text) : { ok: true, value: text };
    case 'boolean':
      if (text === 'true') return { ok: true, value: true };
      if (text === 'false') return { ok: true, value: false };
      return { ok: false, message: `expected true or false, got ${JSON.stringify(raw)}` };
    case 'literal':
      return leaf.values.every((v) => typeof v === 'number') ? parseNumber(text) : { ok: true, value: raw };
    case 'string-array':
      return { ok: true, value: text === '' ? [] : text.split(',').map((item) => item.trim()) };
    case 'json':
      try {
        return { ok: true, value: JSON.parse(text) as unknown };
      } catch (e: unknown) {
        return { ok: false, message: `expected JSON: ${e instanceof Error ? e.message : String(e)}` };
      }
  }
}

function parseNumber(text: string): { ok: true; value: number } | { ok: false; message: string } {
  if (/^-?\d+(\.\d+)?$/.test(text)) return { ok: true, value: Number(text) };
  return { ok: false, message: `expected a number, got ${JSON.stringify(text)}` };
}

/** A setting taken from the environment. */
export interface EnvOverride {
  readonly name: string;
  readonly path: readonly string[];
  readonly value: unknown;
}

/** An `OFFSETSYNC_*` variable that is not a setting and was skipped. Only its name: values are not logged. */
export interface IgnoredEnvVariable {
  readonly name: string;
  /** `tool`: one of {@link TOOL_ENV_VARIABLES}; `kubernetes-service-link`: written by Kubernetes. */
  readonly kind: 'tool' | 'kubernetes-service-link';
  /** What reads the tool variable, or the Service the link describes. */
  readonly about: string;
}

/**
 * Collects every `OFFSETSYNC_*` variable (except {@link CONFIG_FILE_ENV}) as an override, and a problem for
 * each name that names no setting or whose value cannot be parsed. A name that names no setting is
 * skipped (`ignored`) only when it cannot be a setting: a tool variable of the project's own, or a
 * Kubernetes service link (its exact name and value as Kubernetes writes them, next to the Service's
 * `_SERVICE_HOST`). A name that names a setting is always read as one. Sorted by name, so the outcome does
 * not depend on the order of the environment.
 */
export function readEnvOverrides(
  env: NodeJS.ProcessEnv,
  schema: z.ZodType = OffsetSyncConfigSchema,
): { overrides: EnvOverride[]; problems: ConfigProblem[]; ignored: IgnoredEnvVariable[] } {
  const overrides: EnvOverride[] = [];
  const problems: ConfigProblem[] = [];
  const ignored: IgnoredEnvVariable[] = [];
  const names = Object.keys(env)
    .filter((name) => name.startsWith(ENV_PREFIX) && name !== CONFIG_FILE_ENV)
    .sort();
  for (const name of names) {
    const raw = env[name];
    if (raw === undefined) continue;
    const resolved = resolveEnvName(name, schema);
    if (!resolved.ok) {
      const tool = TOOL_ENV_VARIABLES[name];
      if (tool !== undefined) {
        ignored.push({ name, kind: 'tool', about: tool });
        continue;
      }
      const link = kubernetesServiceLink(name, raw, env);
      if (link.kind === 'service-link') {
        ignored.push({ name, kind: 'kubernetes-service-link', about: `Service ${link.service}` });
        continue;
      }
      const hint =
        link.kind === 'mismatch'
          ? `; not taken for a Kubernetes service link of Service ${link.service}: ${link.reason}`
          : '';
      problems.push({
        path: `env:${name}`,
        message: retiredEnvMessage(name) ?? `unknown environment variable: ${resolved.message}${hint}`,
      });
      continue;
    }
    const parsed = parseEnvValue(raw, resolved.resolved);
    if (!parsed.ok) {
      problems.push({ path: resolved.resolved.path.join('.'), message: `${parsed.message} (from ${name})` });
      continue;
    }
    overrides.push({ name, path: resolved.resolved.path, value: parsed.value });
  }
  return { overrides, problems, ignored };
}

/**
 * The `OFFSETSYNC_*` variables of `env` that {@link readEnvOverrides} skips as not settings, for a service to
 * log once at start-up so an operator can see them.
 */
export function ignoredEnvVariables(
  env: NodeJS.ProcessEnv,
  schema: z.ZodType = OffsetSyncConfigSchema,
): IgnoredEnvVariable[] {
  return readEnvOverrides(env, schema).ignored;
}
