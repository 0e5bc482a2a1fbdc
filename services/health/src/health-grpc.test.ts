// The health gRPC server on loopback, without Kafka or NATS: grpc.health.v1 names and server reflection.
import { join } from 'node:path';
import type { Server } from '@grpc/grpc-js';
import {
  credentials,
  loadPackageDefinition,
  status,
  type Client,
  type ClientDuplexStream,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { describe, expect, it, onTestFinished } from 'vitest';
import { HealthClient, type HealthCheckResponse, type LinkStatus } from '@offsetsync/contracts';
import {
  bindServer,
  HealthStatusBoard,
  serverCredentials,
  ServingStatus,
  shutdownServer,
} from '@offsetsync/runtime';
import { createHealthGrpcServer, protoDirectory } from './health-api.js';
import { HealthState } from './health-state.js';

async function serve(reflection = true): Promise<{ address: string; board: HealthStatusBoard }> {
  const board = new HealthStatusBoard();
  const state = new HealthState([], {
    stalledAfterMs: 1,
    laggingAboveMs: 1,
    missingAfterHeartbeats: 1,
    forgetLinkAfterMs: 1,
  });
  const server: Server = createHealthGrpcServer(
    board,
    { state, links: (): LinkStatus[] => [], onLinkChange: () => () => undefined },
    new Set(),
    { reflection },
  );
  const port = await bindServer(server, '127.0.0.1', 0, serverCredentials(undefined));
  onTestFinished(() => shutdownServer(server, 100));
  return { address: `127.0.0.1:${port}`, board };
}

async function listServices(address: string): Promise<string[]> {
  const reflectionProto = join(
    protoDirectory(),
    '..',
    'node_modules',
    '@grpc',
    'reflection',
    'build',
    'proto',
  );
  const definition = loadSync('grpc/reflection/v1/reflection.proto', {
    includeDirs: [reflectionProto],
    keepCase: true,
  });
  const pkg = loadPackageDefinition(definition) as unknown as {
    grpc: {
      reflection: {
        v1: {
          ServerReflection: new (
            a: string,
            c: unknown,
          ) => Client & {
            serverReflectionInfo(): ClientDuplexStream<
              unknown,
              { list_services_response?: { service: { name: string }[] } }
            >;
          };
        };
      };
    };
  };
  const client = new pkg.grpc.reflection.v1.ServerReflection(address, credentials.createInsecure());
  onTestFinished(() => client.close());
  const call = client.serverReflectionInfo();
  const answer = await new Promise<{ list_services_response?: { service: { name: string }[] } }>(
    (resolve, reject) => {
      call.on('data', resolve);
      call.on('error', reject);
      call.write({ list_services: '' });
    },
  );
  call.end();
  return answer.list_services_response?.service.map((s) => s.name) ?? [];
}

describe('health gRPC server', () => {
  it('answers Check per registered name', async () => {
    const { address, board } = await serve();
    board.set('offsetsync.link/a/b', ServingStatus.NOT_SERVING);
    const client = new HealthClient(address, credentials.createInsecure());
    onTestFinished(() => client.close());
    const status = await new Promise<ServingStatus>((resolve, reject) =>
      client.check({ service: 'offsetsync.link/a/b' }, (e, r: HealthCheckResponse) =>
        e ? reject(e) : resolve(r.status),
      ),
    );
    expect(status).toBe(ServingStatus.NOT_SERVING);
  });

  it('lists its services through server reflection, as grpcurl asks', async () => {
    const { address } = await serve();
    const answer = {
      list_services_response: { service: (await listServices(address)).map((name) => ({ name })) },
    };
    expect(answer.list_services_response?.service.map((s) => s.name).sort()).toEqual(
      expect.arrayContaining(['grpc.health.v1.Health', 'offsetsync.v1.OffsetSyncHealth']),
    );
  });

  it('serves no reflection when it is switched off, and the API still answers', async () => {
    const { address, board } = await serve(false);
    await expect(listServices(address)).rejects.toMatchObject({ code: status.UNIMPLEMENTED });
    board.set('offsetsync.link/a/b', ServingStatus.SERVING);
    const client = new HealthClient(address, credentials.createInsecure());
    onTestFinished(() => client.close());
    const answer = await new Promise<ServingStatus>((resolve, reject) =>
      client.check({ service: 'offsetsync.link/a/b' }, (e, r: HealthCheckResponse) =>
        e ? reject(e) : resolve(r.status),
      ),
    );
    expect(answer).toBe(ServingStatus.SERVING);
  });
});
