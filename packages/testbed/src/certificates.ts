// A throwaway certificate authority for the secured test bed, made with openssl. Tests issue more
// certificates from it (for mutual TLS, an expired server certificate, a second name) with the same call
// the bed uses for its own.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TestbedError } from './errors.js';
import { runToCompletion } from './run-command.js';

/** The organisation of every subject this module writes, so a principal mapping rule can match it exactly. */
const ORGANIZATION = 'offsetsync-testbed';

/** A CA that can issue certificates: its PEM certificate (what clients trust) and its PEM private key. */
export interface CertificateAuthority {
  certFile: string;
  keyFile: string;
  /** The folder it and its scratch files live in. */
  dir: string;
}

/** PEM files of an issued certificate; the key is unencrypted PKCS#8, which Kafka's PEM key store, Node and nats-server all read. */
export interface CertificateFiles {
  certFile: string;
  keyFile: string;
}

/** An issued certificate and the subject it was issued to. */
export interface IssuedCertificate extends CertificateFiles {
  /** The subject as Java prints it (RFC 2253, most specific first): `CN=<name>,O=offsetsync-testbed`. */
  subject: string;
  notBefore: Date;
  notAfter: Date;
}

/** What {@link issueCertificate} issues. */
export interface IssueCertificateOptions {
  /** Common name, and the base of the file names. Letters, digits, `.`, `_` and `-`. */
  name: string;
  /** Folder the files are written to (created if missing). */
  dir: string;
  /** Subject alternative names: IP addresses become IP SANs, anything else a DNS SAN. Default: none. */
  hosts?: readonly string[];
  /** Usable as a TLS server certificate. Default: `true`. */
  serverAuth?: boolean;
  /** Usable as a TLS client certificate (mutual TLS, Kafka's SSL principal). Default: `false`. */
  clientAuth?: boolean;
  /** Valid for this many days from now (ignored when `notAfter` is set). Default: `30`. */
  validDays?: number;
  /** Start of validity. Default: an hour ago, so clocks a little apart still agree it is valid. */
  notBefore?: Date;
  /** End of validity; a date in the past gives an expired certificate. Default: `validDays` from now. */
  notAfter?: Date;
}

const SAFE_NAME = /^[A-Za-z0-9._-]+$/;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Creates a self-signed CA (EC P-256, valid 30 days) in `dir`: `ca.pem` and `ca-key.pem`. */
export async function createCertificateAuthority(
  dir: string,
  options: { name?: string } = {},
): Promise<CertificateAuthority> {
  const name = options.name ?? 'offsetsync-testbed-ca';
  checkName(name);
  await mkdir(dir, { recursive: true });
  const certFile = join(dir, 'ca.pem');
  const keyFile = join(dir, 'ca-key.pem');
  await runToCompletion('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-days',
    '30',
    '-subj',
    `/O=${ORGANIZATION}/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return { certFile, keyFile, dir };
}

/**
 * Issues a certificate signed by `ca`: `<dir>/<name>.pem` and `<dir>/<name>-key.pem`. `openssl ca` is used
 * rather than `openssl x509 -req` because only it takes explicit validity dates (an expired certificate).
 * Each call keeps its own scratch database, so concurrent calls do not contend for one.
 */
export async function issueCertificate(
  ca: CertificateAuthority,
  options: IssueCertificateOptions,
): Promise<IssuedCertificate> {
  const { name, dir } = options;
  checkName(name);
  const now = Date.now();
  const notBefore = options.notBefore ?? new Date(now - HOUR_MS);
  const notAfter = options.notAfter ?? new Date(now + (options.validDays ?? 30) * DAY_MS);
  if (notAfter.getTime() <= notBefore.getTime()) {
    throw new TestbedError('INVALID_OPTIONS', `certificate ${name}: notAfter must be later than notBefore`);
  }
  const usages = [
    ...(options.serverAuth === false ? [] : ['serverAuth']),
    ...(options.clientAuth === true ? ['clientAuth'] : []),
  ];
  if (usages.length === 0) {
    throw new TestbedError('INVALID_OPTIONS', `certificate ${name}: neither serverAuth nor clientAuth`);
  }
  const hosts = options.hosts ?? [];
  for (const host of hosts) {
    if (!SAFE_NAME.test(host) && !isIpAddress(host)) {
      throw new TestbedError(
        'INVALID_OPTIONS',
        `certificate ${name}: host ${JSON.stringify(host)} is not a name or IP`,
      );
    }
  }

  await mkdir(dir, { recursive: true });
  const certFile = join(dir, `${name}.pem`);
  const keyFile = join(dir, `${name}-key.pem`);
  const scratch = await mkdtemp(join(ca.dir, `.issue-${name}-`));
  try {
    const csrFile = join(scratch, 'request.csr');
    await runToCompletion('openssl', [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      csrFile,
      '-subj',
      `/O=${ORGANIZATION}/CN=${name}`,
    ]);
    await writeFile(join(scratch, 'index.txt'), '');
    const configFile = join(scratch, 'ca.cnf');
    await writeFile(configFile, caConfig(scratch, usages, hosts));
    await runToCompletion('openssl', [
      'ca',
      '-batch',
      '-config',
      configFile,
      '-cert',
      ca.certFile,
      '-keyfile',
      ca.keyFile,
      '-in',
      csrFile,
      '-out',
      certFile,
      '-rand_serial',
      '-notext',
      '-extensions',
      'leaf',
      '-startdate',
      opensslTime(notBefore),
      '-enddate',
      opensslTime(notAfter),
    ]);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return { certFile, keyFile, subject: `CN=${name},O=${ORGANIZATION}`, notBefore, notAfter };
}

function caConfig(scratch: string, usages: readonly string[], hosts: readonly string[]): string {
  const altNames = hosts.map((host) => (isIpAddress(host) ? `IP:${host}` : `DNS:${host}`)).join(',');
  return [
    '[ca]',
    'default_ca = testbed',
    '[testbed]',
    `database = ${join(scratch, 'index.txt')}`,
    `new_certs_dir = ${scratch}`,
    `serial = ${join(scratch, 'serial')}`,
    'default_md = sha256',
    'policy = any',
    'unique_subject = no',
    // The request's subject is taken as it is; extensions come only from the section below.
    'preserve = yes',
    'copy_extensions = none',
    '[any]',
    'organizationName = supplied',
    'commonName = supplied',
    '[leaf]',
    'basicConstraints = critical,CA:FALSE',
    'keyUsage = critical,digitalSignature,keyEncipherment',
    `extendedKeyUsage = ${usages.join(',')}`,
    ...(altNames === '' ? [] : [`subjectAltName = ${altNames}`]),
    '',
  ].join('\n');
}

/** `YYYYMMDDHHMMSSZ`, the GeneralizedTime form `openssl ca -startdate/-enddate` takes. */
function opensslTime(date: Date): string {
  return `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
}

function isIpAddress(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || (host.includes(':') && /^[0-9a-fA-F:]+$/.test(host));
}

function checkName(name: string): void {
  if (!SAFE_NAME.test(name)) {
    throw new TestbedError(
      'INVALID_OPTIONS',
      `certificate name ${JSON.stringify(name)}: use letters, digits, '.', '_' and '-'`,
    );
  }
}
