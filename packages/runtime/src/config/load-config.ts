import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { ConfigError, type ConfigProblem } from '@offsetsync/contracts';
import { CONFIG_FILE_ENV } from './env-names.js';
import { unreadableFileProblems } from './file-problems.js';
import { readEnvOverrides } from './env-overrides.js';
import { retiredSettingMessage } from './retired-settings.js';
import { OffsetSyncConfigSchema, type OffsetSyncConfig } from './schema.js';

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** YAML configuration file. Default: the file named by `OFFSETSYNC_CONFIG`, else none (all defaults). */
  file?: string;
  /** Environment to read `OFFSETSYNC_*` variables from. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** An object deep-merged over file and environment, last (for tests). Arrays are replaced, not merged. */
  overrides?: unknown;
}

type PlainObject = Record<string, unknown>;

/**
 * Loads the configuration: the YAML file, then `OFFSETSYNC_*` environment variables over it, then
 * `overrides`, validated by {@link OffsetSyncConfigSchema}. Every problem (YAML syntax, unknown environment
 * variables, invalid values, cross-field rules) is collected and thrown together as one
 * {@link ConfigError}; nothing is corrected silently.
 */
export function loadConfig(options: LoadConfigOptions = {}): OffsetSyncConfig {
  const env = options.env ?? process.env;
  const problems: ConfigProblem[] = [];
  const fromEnv = new Map<string, string>();

  const fileFromEnv = env[CONFIG_FILE_ENV];
  const file = options.file ?? (fileFromEnv === '' ? undefined : fileFromEnv);
  let raw: PlainObject = file === undefined ? {} : readConfigFile(file, problems);

  const envResult = readEnvOverrides(env);
  problems.push(...envResult.problems);
  for (const override of envResult.overrides) {
    const conflict = setPath(raw, override.path, override.value);
    if (conflict !== undefined) {
      problems.push({
        path: override.path.join('.'),
        message: `cannot apply ${override.name}: ${conflict} in the configuration file is not a mapping`,
      });
    } else {
      fromEnv.set(override.path.join('.'), override.name);
    }
  }

  if (options.overrides !== undefined) {
    if (isPlainObject(options.overrides)) {
      raw = deepMerge(raw, options.overrides);
      for (const path of leafPaths(options.overrides)) fromEnv.delete(path);
    } else {
      problems.push({ path: 'overrides', message: 'overrides must be an object' });
    }
  }

  const result = OffsetSyncConfigSchema.safeParse(raw, { error: requiredMessage });
  if (!result.success) problems.push(...result.error.issues.flatMap((issue) => toProblems(issue, fromEnv)));
  else problems.push(...unreadableFileProblems(result.data));
  if (problems.length > 0 || !result.success) throw new ConfigError(problems);
  return result.data;
}

/** Zod says "expected string, received undefined" for a missing field; "required" is what an operator needs. */
function requiredMessage(issue: z.core.$ZodRawIssue): string | undefined {
  return issue.code === 'invalid_type' && issue.input === undefined ? 'required' : undefined;
}

function readConfigFile(file: string, problems: ConfigProblem[]): PlainObject {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e: unknown) {
    const reason = e instanceof Error ? e.message : String(e);
    problems.push({ path: `file:${file}`, message: `cannot read the configuration file: ${reason}` });
    return {};
  }
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    for (const error of document.errors) {
      const position = lineCounter.linePos(error.pos[0]);
      const where = `${file}:${position.line}:${position.col}`;
      problems.push({
        path: `file:${where}`,
        message: `YAML syntax error: ${error.message.split('\n')[0] ?? ''}`,
      });
    }
    return {};
  }
  const value: unknown = document.toJS();
  if (value === null || value === undefined) return {};
  if (!isPlainObject(value)) {
    problems.push({
      path: `file:${file}`,
      message: 'the configuration file must contain a mapping at the top level',
    });
    return {};
  }
  // YAML aliases share one object between places; copy so an override of one place changes only that one.
  return copyTree(value) as PlainObject;
}

function copyTree(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyTree);
  if (isPlainObject(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copyTree(v)]));
  return value;
}

/**
 * Sets `value` at `path` inside `target`, creating mappings on the way. Returns the dotted path of an
 * existing non-mapping value that is in the way, or undefined when the value was set.
 */
function setPath(target: PlainObject, path: readonly string[], value: unknown): string | undefined {
  let node = target;
  for (const [index, key] of path.entries()) {
    if (index === path.length - 1) {
      node[key] = value;
      return undefined;
    }
    const next = node[key];
    if (next === undefined || next === null) {
      const created: PlainObject = {};
      node[key] = created;
      node = created;
    } else if (isPlainObject(next)) {
      node = next;
    } else {
      return path.slice(0, index + 1).join('.');
    }
  }
  return undefined;
}

function deepMerge(base: PlainObject, over: PlainObject): PlainObject {
  const merged: PlainObject = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    const existing = merged[key];
    merged[key] = isPlainObject(existing) && isPlainObject(value) ? deepMerge(existing, value) : value;
  }
  return merged;
}

function leafPaths(value: PlainObject, prefix = ''): string[] {
  return Object.entries(value).flatMap(([key, child]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    return isPlainObject(child) ? leafPaths(child, path) : [path];
  });
}

function isPlainObject(value: unknown): value is PlainObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function toProblems(issue: z.core.$ZodIssue, fromEnv: ReadonlyMap<string, string>): ConfigProblem[] {
  const base = issue.path.map((segment) => String(segment));
  const problem = (segments: string[], message: string): ConfigProblem => {
    const path = segments.join('.');
    return { path, message: withEnvSource(path, message, fromEnv) };
  };
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) =>
        problem([...base, key], retiredSettingMessage([...base, key].join('.')) ?? 'unknown setting'),
      );
    case 'invalid_key': {
      const reasons = issue.issues.map((inner) => inner.message).join('; ');
      const key = base[base.length - 1] ?? '';
      return [problem(base, `invalid key ${JSON.stringify(key)}: ${reasons}`)];
    }
    default:
      return [problem(base, issue.message)];
  }
}

/** Names the environment variable a bad value came from, so the operator knows where to fix it. */
function withEnvSource(path: string, message: string, fromEnv: ReadonlyMap<string, string>): string {
  for (const [envPath, name] of fromEnv) {
    if (path === envPath || path.startsWith(`${envPath}.`)) return `${message} (from ${name})`;
  }
  return message;
}
