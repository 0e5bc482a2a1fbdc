// How a setting's path is written as an environment variable name (`nats.connectTimeoutMs` is
// `OFFSETSYNC_NATS__CONNECT_TIMEOUT_MS`). Pure; env-overrides.ts reads variables by these names.

/** Prefix of every offsetsync environment variable. */
export const ENV_PREFIX = 'OFFSETSYNC_';
/** The variable naming the configuration file; not a setting. */
export const CONFIG_FILE_ENV = 'OFFSETSYNC_CONFIG';
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
