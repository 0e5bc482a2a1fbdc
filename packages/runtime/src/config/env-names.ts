// How a setting's path is written as an environment variable name (`nats.connectTimeoutMs` is
// `OFFSETSYNC_NATS__CONNECT_TIMEOUT_MS`). Pure; env-overrides.ts reads variables by these names.

/** Prefix of every offsetsync environment variable. */
export const ENV_PREFIX = 'OFFSETSYNC_';
/** The variable naming the configuration file; not a setting. */
export const CONFIG_FILE_ENV = 'OFFSETSYNC_CONFIG';
/**
 * Variables of the project's own tools (test bed, tests, benchmarks) that share the prefix but are not
 * settings, with what reads them. The config loader skips them, so a shell set up for the test bed can
 * still start a service. None contains the `__` separator or names a setting; env-names.test.ts checks
 * that, and that every `OFFSETSYNC_*` variable the repository's code reads is a setting, {@link
 * CONFIG_FILE_ENV} or listed here.
 */
export const TOOL_ENV_VARIABLES: Readonly<Record<string, string>> = {
  OFFSETSYNC_TESTBED:
    'tests and benchmarks: `reuse` runs them against the test bed `npm run infra -- up` started',
  OFFSETSYNC_TESTBED_FILE: 'the state file of the test bed (default .infra/testbed.json)',
  OFFSETSYNC_INFRA_CACHE: 'where the test bed caches the Kafka jars (default ~/.cache/offsetsync)',
};

/** Separates the path segments in a variable name. */
export const SEPARATOR = '__';

/** One path segment as written in an environment variable name. */
export function toEnvSegment(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/-/g, '_')
    .toUpperCase();
}

/** The environment variable that sets the setting at `path` (`['nats', 'servers']` -> `OFFSETSYNC_NATS__SERVERS`). */
export function envNameForPath(path: readonly string[]): string {
  return ENV_PREFIX + path.map(toEnvSegment).join(SEPARATOR);
}
