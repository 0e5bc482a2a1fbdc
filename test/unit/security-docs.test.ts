// docs/security.md shows the Kafka ACLs and the NATS permissions of an example deployment. They are what
// `offsetsync security kafka-acls|nats-config` prints for that example, so the page cannot drift from the
// code the services run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '@offsetsync/runtime';
import { kafkaAclLines } from '../../cli/src/security/kafka-acl-lines.js';
import { deploymentNatsUsers, natsAuthorizationBlock } from '../../cli/src/security/nats-authorization.js';
import { REPO_ROOT } from '../infra/testbed.js';

const page = readFileSync(join(REPO_ROOT, 'docs', 'security.md'), 'utf8');

/** The fenced block right after `<!-- security:<name> -->`. */
function blockAfter(name: string): string {
  const marker = `<!-- security:${name} -->\n`;
  const at = page.indexOf(marker);
  if (at < 0) throw new Error(`docs/security.md has no ${marker.trim()}`);
  const match = /^\s*```[a-z]*\n([\s\S]*?)```\n/.exec(page.slice(at + marker.length));
  if (match === null) throw new Error(`no fenced block after ${marker.trim()}`);
  return match[1] ?? '';
}

const config = loadConfig({ env: {}, overrides: parse(blockAfter('example-config')) as unknown });

describe('docs/security.md', () => {
  it('lists exactly the Kafka ACLs `offsetsync security kafka-acls` prints for its example', () => {
    expect(blockAfter('kafka-acls')).toBe(kafkaAclLines(config));
  });

  it('shows exactly the NATS authorization block `offsetsync security nats-config` prints for its example', () => {
    expect(blockAfter('nats-config')).toBe(natsAuthorizationBlock(deploymentNatsUsers(config)));
  });
});
