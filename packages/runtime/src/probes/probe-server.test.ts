import { credentials } from '@grpc/grpc-js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { HealthClient, type HealthCheckResponse } from '@offsetsync/contracts';
import { ServingStatus } from './health-status-board.js';
import { ProbeServer } from './probe-server.js';

function check(client: HealthClient, service: string): Promise<ServingStatus | number> {
  return new Promise((resolve) =>
    client.check({ service }, (error, response: HealthCheckResponse) =>
      resolve(error ? error.code : response.status),
    ),
  );
}

describe('ProbeServer', () => {
  it('answers NOT_SERVING while starting, SERVING while running, NOT_SERVING while stopping; Watch sees each', async () => {
    const probe = await ProbeServer.start('127.0.0.1', 0);
    onTestFinished(() => probe.stop());
    const client = new HealthClient(`127.0.0.1:${probe.port}`, credentials.createInsecure());
    onTestFinished(() => client.close());
    expect(await check(client, '')).toBe(ServingStatus.NOT_SERVING);
    expect(await check(client, 'something-else')).toBe(5); // NOT_FOUND
    const seen: ServingStatus[] = [];
    const watch = client.watch({ service: '' });
    watch.on('data', (r: HealthCheckResponse) => seen.push(r.status));
    watch.on('error', () => undefined);
    const ended = new Promise<void>((resolve) => watch.on('end', resolve));
    await new Promise((resolve) => setTimeout(resolve, 100));
    probe.serving();
    expect(await check(client, '')).toBe(ServingStatus.SERVING);
    await probe.stop();
    await ended;
    expect(seen).toEqual([ServingStatus.NOT_SERVING, ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
  });
});
