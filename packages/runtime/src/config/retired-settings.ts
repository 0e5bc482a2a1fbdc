// Settings that existed in an earlier release and no longer do. A config that still uses one is refused
// like any unknown setting, but the problem says what to write instead, in the file and in the environment.
import { envNameForPath } from './env-names.js';

interface RetiredSetting {
  /** Dotted path of the old setting. */
  path: string;
  /** The setting that took its place, or why it is gone. */
  replacement: { renamedTo: string } | { removed: string };
}

const RETIRED: readonly RetiredSetting[] = [
  {
    path: 'collector.coalesceWindowMs',
    replacement: { renamedTo: 'collector.fetchMaxWaitMs' },
  },
  {
    path: 'collector.publishBatchSize',
    replacement: { renamedTo: 'collector.publishConcurrency' },
  },
  {
    path: 'committer.batchMaxWaitMs',
    replacement: {
      removed:
        'it had no effect: a batch is what the consumer collected while the previous one was committed',
    },
  },
];

/** Every retired setting with what replaced it, for the configuration reference. */
export function retiredSettings(): { path: string; env: string; instead: string }[] {
  return RETIRED.map((setting) => ({
    path: setting.path,
    env: envNameForPath(setting.path.split('.')),
    instead: retiredSettingMessage(setting.path) ?? '',
  }));
}

/** What to tell an operator who set the retired setting at `path` in the file; undefined for any other path. */
export function retiredSettingMessage(path: string): string | undefined {
  const retired = RETIRED.find((setting) => setting.path === path);
  if (retired === undefined) return undefined;
  return 'renamedTo' in retired.replacement
    ? `renamed to ${retired.replacement.renamedTo}`
    : `no longer a setting: ${retired.replacement.removed}`;
}

/** The same for an environment variable that named a retired setting. */
export function retiredEnvMessage(name: string): string | undefined {
  const retired = RETIRED.find((setting) => envNameForPath(setting.path.split('.')) === name);
  if (retired === undefined) return undefined;
  return 'renamedTo' in retired.replacement
    ? `renamed to ${envNameForPath(retired.replacement.renamedTo.split('.'))}`
    : `no longer a setting: ${retired.replacement.removed}`;
}
