// Issue 17: the chart runs every service with a read-only root file system and one writable emptyDir at
// /tmp. Each service is traced with strace (every thread, from its first instruction) while it connects
// to Kafka and NATS, provisions its streams and heartbeats; every successful call that writes to the
// file system (an open for writing or creating, mkdir, rename, unlink, chmod, ...) must name a path
// under /tmp or /dev/null.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { Names } from '@offsetsync/contracts';
import { startService } from '@offsetsync/harness';
import { GiveUp, REPO_ROOT } from '@offsetsync/testbed';
import { freePort } from '../infra/free-port.js';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { heartbeats, natsConnection } from '../support/jetstream.js';
import { uniqueName } from '../support/names.js';
import { SERVICE_ROLES } from '../support/service-roles.js';

const testbed = inject('testbed');

const ROLES = SERVICE_ROLES;

/** Where the chart lets a service write: its /tmp emptyDir, and /dev/null. */
const WRITABLE = ['/tmp/', '/dev/null'];

/** Calls that change the file system whatever their flags. */
const WRITING_CALLS = new Set([
  'creat',
  'mkdir',
  'mkdirat',
  'rmdir',
  'unlink',
  'unlinkat',
  'rename',
  'renameat',
  'renameat2',
  'link',
  'linkat',
  'symlink',
  'symlinkat',
  'chmod',
  'fchmodat',
  'chown',
  'lchown',
  'fchownat',
  'truncate',
  'utimensat',
  'mknod',
  'mknodat',
]);

const OPEN_CALLS = new Set(['open', 'openat', 'openat2']);
const WRITE_FLAGS = /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND/;

/**
 * The paths outside `writable` that the calls in an strace log (`-f -z`, one `PID call(args) = ret` per
 * line) write to; relative paths are resolved against `cwd`. Pure.
 */
function writesOutside(straceLog: string, cwd: string, writable: readonly string[]): string[] {
  const found = new Set<string>();
  for (const line of straceLog.split('\n')) {
    const call = /^\d+\s+(\w+)\((.*)\)\s+=\s+\d+/.exec(line);
    if (call === null) continue;
    const [, name, args] = call as unknown as [string, string, string];
    const writes = WRITING_CALLS.has(name) || (OPEN_CALLS.has(name) && WRITE_FLAGS.test(args));
    if (!writes) continue;
    for (const [, quoted] of args.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
      const path = isAbsolute(quoted!) ? quoted! : resolve(cwd, quoted!);
      if (!writable.some((w) => (w.endsWith('/') ? path.startsWith(w) : path === w))) found.add(path);
    }
  }
  return [...found].sort();
}

describe('writesOutside', () => {
  it('finds writes outside the writable paths and nothing else', () => {
    const log = [
      '101 openat(AT_FDCWD, "/etc/ssl/openssl.cnf", O_RDONLY|O_CLOEXEC) = 3',
      '101 openat(AT_FDCWD, "/tmp/x/service.log", O_WRONLY|O_CREAT|O_APPEND, 0666) = 4',
      '102 openat(AT_FDCWD, "/var/cache/x", O_RDWR|O_CREAT|O_CLOEXEC, 0644) = 5',
      '102 mkdir("cache", 0777) = 0',
      '103 renameat2(AT_FDCWD, "/tmp/a", AT_FDCWD, "/home/b", RENAME_NOREPLACE) = 0',
      '103 openat(AT_FDCWD, "/dev/null", O_WRONLY|O_CLOEXEC) = 6',
      '104 --- SIGTERM {si_signo=SIGTERM} ---',
    ].join('\n');
    expect(writesOutside(log, '/repo', WRITABLE)).toEqual(['/home/b', '/repo/cache', '/var/cache/x']);
  });
});

describe('what the services write', () => {
  it('each service, connected, provisioned and heartbeating, writes nothing outside /tmp', async () => {
    const config = testConfig(testbed, {
      collector: { cluster: 'source', groups: { include: [`^${uniqueName('none')}$`] } },
      translator: { target: 'target' },
      committer: { target: 'target' },
      health: { grpc: { host: '127.0.0.1', port: await freePort() } },
    });
    const names = new Names(config.nats.subjectPrefix);
    const jsm = await (await natsConnection(testbed.nats.url)).jetstreamManager();
    const instanceId = uniqueName('writes');
    const traced = await Promise.all(
      ROLES.map(async ({ role, heartbeatRole }) => {
        const id = `${instanceId}-${role}`;
        const file = join(await mkdtemp(join(tmpdir(), 'offsetsync-strace-')), `${role}.log`);
        // -D: strace runs as a grandchild, so the started process is the service itself, traced from its
        // first instruction (every thread: -f; successful calls only: -z; whole paths: -s).
        const service = await startService(role, config, {
          env: { OFFSETSYNC_INSTANCE__ID: id },
          wrapper: ['strace', '-D', '-f', '-qq', '-z', '-s', '4096', '-e', 'trace=%file', '-o', file],
        });
        // Two heartbeats: past its start and at work.
        let beats = 0;
        let last = 0;
        await waitFor(
          `two heartbeats of the ${role}`,
          async () => {
            if (!service.running()) throw new GiveUp(`the ${role} exited: ${await service.log()}`);
            const beat = (await heartbeats(jsm, names, heartbeatRole).catch(() => [])).find(
              (b) => b.instanceId === id,
            );
            if (beat !== undefined && beat.sentAtMs > last) {
              beats += 1;
              last = beat.sentAtMs;
            }
            return beats >= 2 ? true : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 200 },
        );
        // A clean stop writes too (flushes, removes what it made): trace it to the end.
        expect(await service.stop(), `${role} exit code`).toBe(0);
        return { role, file };
      }),
    );
    for (const { role, file } of traced) {
      const log = await readFile(file, 'utf8');
      // The trace saw the service start: it opened its own code (a trace that missed it proves nothing).
      expect(log, role).toMatch(new RegExp(`services/${role}/dist/`));
      expect(writesOutside(log, REPO_ROOT, WRITABLE), role).toEqual([]);
    }
  });
});
