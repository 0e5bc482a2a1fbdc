import { describe, expect, it } from 'vitest';
import { Names } from '@offsetsync/contracts';
import { inboxPrefix, natsPermissions, type NatsRole } from './permissions.js';

const names = new Names('osync');
const links = [
  { source: 'onprem', target: 'cloud' },
  { source: 'edge', target: 'cloud' },
  { source: 'onprem', target: 'dr' },
];

describe('natsPermissions', () => {
  it('lets a committer publish applied events and KV keys of its own links only', () => {
    const { publish } = natsPermissions(names, 'committer', { links, target: 'cloud' });
    expect(publish.allow).toContain('osync.applied.onprem.cloud.>');
    expect(publish.allow).toContain('osync.applied.edge.cloud.>');
    expect(publish.allow).toContain('$KV.osync_applied_versions.onprem.cloud.>');
    expect(publish.allow.some((s) => s.includes('.dr'))).toBe(false);
    expect(publish.allow).toContain('$JS.API.CONSUMER.MSG.NEXT.OSYNC_TRANSLATED.committer-onprem-cloud');
  });

  it('lets a translator publish translations for its target only, never applied events', () => {
    const { publish } = natsPermissions(names, 'translator', { links, target: 'dr' });
    expect(publish.allow).toContain('osync.translated.onprem.dr.>');
    expect(publish.allow.some((s) => s.includes('cloud') || s.startsWith('osync.applied'))).toBe(false);
  });

  it('lets a collector publish committed events of its own source only', () => {
    const { publish } = natsPermissions(names, 'collector', { links, source: 'edge' });
    expect(publish.allow.filter((s) => s.startsWith('osync.committed'))).toEqual(['osync.committed.edge.>']);
  });

  it.each<NatsRole>(['collector', 'translator', 'committer', 'health'])(
    'gives the %s no JetStream admin right and no wildcard over the API',
    (role) => {
      const scope = { links, source: 'onprem', target: 'cloud' };
      const { publish, subscribe } = natsPermissions(names, role, scope);
      for (const subject of publish.allow) {
        expect(subject).not.toMatch(/^\$JS\.API\.(>|STREAM\.(CREATE|UPDATE|DELETE|PURGE)|CONSUMER\.DURABLE)/);
        expect(subject).not.toMatch(/^_INBOX/);
      }
      expect(subscribe.allow).toEqual([`${inboxPrefix(names, role)}.>`]);
    },
  );

  it('refuses a scope without the cluster the role serves', () => {
    expect(() => natsPermissions(names, 'committer', { links })).toThrow(/target/);
    expect(() => natsPermissions(names, 'translator', { links, target: 'nowhere' })).toThrow(/no link/);
  });
});
