import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, Server } from '@grpc/grpc-js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ErrorCodes } from '@offsetsync/contracts';
import { HealthClient, HealthService, type HealthCheckResponse } from '@offsetsync/contracts';
import { bindServer, serverCredentials, shutdownServer } from './grpc-server.js';
import { HealthStatusBoard, healthServer, ServingStatus } from './health-status-board.js';

describe('gRPC server', () => {
  it('serves over TLS with the configured certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'offsetsync-tls-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    const board = new HealthStatusBoard();
    board.set('', ServingStatus.SERVING);
    const server = new Server();
    server.addService(HealthService, healthServer(board));
    const port = await bindServer(
      server,
      '127.0.0.1',
      0,
      serverCredentials({ certFile: cert, keyFile: key }),
    );
    onTestFinished(() => shutdownServer(server, 100));
    const client = new HealthClient(`localhost:${port}`, credentials.createSsl(readFileSync(cert)));
    onTestFinished(() => client.close());
    const status = await new Promise<ServingStatus>((resolve, reject) =>
      client.check({ service: '' }, (e, r: HealthCheckResponse) => (e ? reject(e) : resolve(r.status))),
    );
    expect(status).toBe(ServingStatus.SERVING);
  });

  it('reports unreadable TLS files as a config error', () => {
    expect(() =>
      serverCredentials({ certFile: '/nonexistent/cert.pem', keyFile: '/nonexistent/key.pem' }),
    ).toThrow(expect.objectContaining({ code: ErrorCodes.CONFIG_INVALID }));
  });
});
