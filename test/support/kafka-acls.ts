// Kafka ACLs on the secured test bed, granted and revoked as the bed's admin. Each call returns once the
// broker's authorizer reports the change (DescribeAcls is answered from the same state the broker
// enforces), so the next request of the test already meets the new ACLs.
import kafkajs, { type AclEntry, type Admin } from 'kafkajs';
import { bedKafkaCredentials, type TestbedInfo } from '../infra/testbed.js';
import { waitFor } from '../infra/wait.js';
import { kafkaClient } from './kafka-clients.js';

const { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } = kafkajs;

/** One ACL: `principal` may (or, with DENY, may not) do `operation` on the resource. */
export interface AclSpec {
  /** `User:<name>`. */
  principal: string;
  resourceType: 'TOPIC' | 'GROUP' | 'CLUSTER' | 'TRANSACTIONAL_ID';
  /** The resource's name or prefix; the cluster's is `kafka-cluster`. */
  resourceName: string;
  patternType: 'LITERAL' | 'PREFIXED';
  operation:
    | 'READ'
    | 'WRITE'
    | 'DESCRIBE'
    | 'CREATE'
    | 'DELETE'
    | 'ALTER'
    | 'DESCRIBE_CONFIGS'
    | 'ALTER_CONFIGS'
    | 'IDEMPOTENT_WRITE'
    | 'ALL';
  /** Default: `ALLOW`. */
  permissionType?: 'ALLOW' | 'DENY';
}

const PROPAGATION_TIMEOUT_MS = 15_000;

/** Adds `acls` on one cluster of the secured bed and waits until the broker reports every one of them. */
export async function grantAcls(
  testbed: TestbedInfo,
  cluster: 'source' | 'target',
  acls: readonly AclSpec[],
): Promise<void> {
  await asAdmin(testbed, cluster, async (admin) => {
    await admin.createAcls({ acl: acls.map(aclEntry) });
    await waitFor(
      `ACLs granted on ${cluster}`,
      async () => ((await allPresent(admin, acls)) ? true : undefined),
      {
        timeoutMs: PROPAGATION_TIMEOUT_MS,
      },
    );
  });
}

/** Removes `acls` from one cluster of the secured bed and waits until the broker reports none of them. */
export async function revokeAcls(
  testbed: TestbedInfo,
  cluster: 'source' | 'target',
  acls: readonly AclSpec[],
): Promise<void> {
  await asAdmin(testbed, cluster, async (admin) => {
    await admin.deleteAcls({ filters: acls.map(aclEntry) });
    await waitFor(
      `ACLs revoked on ${cluster}`,
      async () => ((await nonePresent(admin, acls)) ? true : undefined),
      {
        timeoutMs: PROPAGATION_TIMEOUT_MS,
      },
    );
  });
}

async function asAdmin(
  testbed: TestbedInfo,
  cluster: 'source' | 'target',
  work: (admin: Admin) => Promise<void>,
): Promise<void> {
  const { security } = testbed;
  if (security === undefined)
    throw new Error('Kafka ACLs need the secured test bed: startTestbed({ secure })');
  const kafka = kafkaClient(
    testbed[cluster].bootstrapServers,
    'offsetsync-test-acls',
    bedKafkaCredentials(testbed, security.kafkaAdmin.username),
  );
  const admin = kafka.admin();
  await admin.connect();
  try {
    await work(admin);
  } finally {
    await admin.disconnect();
  }
}

function aclEntry(spec: AclSpec): AclEntry {
  return {
    principal: spec.principal,
    host: '*',
    resourceType: AclResourceTypes[spec.resourceType],
    resourceName: spec.resourceName,
    resourcePatternType: ResourcePatternTypes[spec.patternType],
    operation: AclOperationTypes[spec.operation],
    permissionType: AclPermissionTypes[spec.permissionType ?? 'ALLOW'],
  };
}

/** How many of the broker's ACLs match `spec` exactly (0 or 1). */
async function matches(admin: Admin, spec: AclSpec): Promise<number> {
  const entry = aclEntry(spec);
  const { resources } = await admin.describeAcls(entry);
  return resources
    .filter(
      (resource) =>
        resource.resourceName === entry.resourceName &&
        resource.resourcePatternType === entry.resourcePatternType,
    )
    .flatMap((resource) => resource.acls).length;
}

async function allPresent(admin: Admin, acls: readonly AclSpec[]): Promise<boolean> {
  for (const spec of acls) if ((await matches(admin, spec)) === 0) return false;
  return true;
}

async function nonePresent(admin: Admin, acls: readonly AclSpec[]): Promise<boolean> {
  for (const spec of acls) if ((await matches(admin, spec)) > 0) return false;
  return true;
}
