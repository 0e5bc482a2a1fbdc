// `npm run infra -- up|down|status`: the test bed from the command line.
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { defaultSecureOptions } from './default-secure-options.js';
import { ensureHelmJava } from './helm-java.js';
import { ensureKafkaDistribution } from './kafka-dist.js';
import { isAlive } from './processes.js';
import {
  readTestbedFile,
  startTestbed,
  stopTestbed,
  testbedStateFile,
  writeTestbedFile,
  type TestbedInfo,
} from './testbed.js';

const USAGE = `usage: npm run infra -- <command>

  fetch   put the Kafka broker, tools and MirrorMaker 2 jars and helm-java (Helm's engine, which the
          chart tests render with) in the cache (Maven; nothing is downloaded when they are there)
  up      start a source and a target Kafka cluster and a JetStream server on free loopback ports,
          print their addresses and write them to ${testbedStateFile()}
          --secure: Kafka only over SASL_SSL (SCRAM-SHA-512, ACLs enforced), NATS only over TLS with
          user logins, certificates from a CA made for the bed; users, passwords and password files
          are in the state file
          --clusters=a,b,c: these Kafka clusters (at least two; the first two are also source and
          target) instead of source and target
  down    stop every process 'up' started and remove its data
  status  print the state file and whether each process still runs`;

async function main(command: string | undefined, flags: readonly string[]): Promise<number> {
  const stateFile = testbedStateFile();
  switch (command) {
    case 'fetch': {
      const dist = await ensureKafkaDistribution({ log: (line) => console.error(line) });
      console.log(
        `Kafka ${dist.version} jars ${dist.fetched ? 'fetched into' : 'already in'} ${dist.libDir}`,
      );
      const helm = await ensureHelmJava({ log: (line) => console.error(line) });
      console.log(`helm-java jars ${helm.fetched ? 'fetched into' : 'already in'} ${helm.libDir}`);
      return 0;
    }
    case 'up': {
      const existing = await readTestbedFile(stateFile);
      const pids = existing && [...Object.values(existing.clusters).map((c) => c.pid), existing.nats.pid];
      if (pids?.some(isAlive)) {
        console.error(`a test bed is already up (${stateFile}); run 'npm run infra -- down' first`);
        return 1;
      }
      const unknown = flags.filter((flag) => flag !== '--secure' && !flag.startsWith('--clusters='));
      const clusters = flags.find((flag) => flag.startsWith('--clusters='))?.slice('--clusters='.length);
      if (unknown.length > 0) {
        console.error(`unknown option ${unknown.join(' ')}\n\n${USAGE}`);
        return 2;
      }
      const info = await startTestbed({
        log: (line) => console.error(line),
        ...(flags.includes('--secure') ? { secure: defaultSecureOptions() } : {}),
        ...(clusters === undefined ? {} : { clusters: clusters.split(',') }),
      });
      await writeTestbedFile(stateFile, info);
      for (const cluster of Object.values(info.clusters))
        console.log(
          `${cluster.name.padEnd(8)} ${cluster.bootstrapServers}   (cluster id ${cluster.clusterId})`,
        );
      console.log(`nats     ${info.nats.url}`);
      printSecurity(info);
      console.log(`ready in ${info.readyMs} ms; state in ${stateFile}`);
      return 0;
    }
    case 'down': {
      const info = await readTestbedFile(stateFile);
      if (!info) {
        console.log('no test bed is up');
        return 0;
      }
      await stopTestbed(info);
      await rm(stateFile, { force: true });
      console.log('test bed stopped and its data removed');
      return 0;
    }
    case 'status': {
      const info = await readTestbedFile(stateFile);
      if (!info) {
        console.log('no test bed is up');
        return 1;
      }
      for (const [name, pid, address] of [
        ['source', info.source.pid, info.source.bootstrapServers],
        ['target', info.target.pid, info.target.bootstrapServers],
        ['nats', info.nats.pid, info.nats.url],
      ] as const) {
        console.log(
          `${name.padEnd(8)} ${address.padEnd(24)} pid ${pid} ${isAlive(pid) ? 'running' : 'NOT RUNNING'}`,
        );
      }
      printSecurity(info);
      return 0;
    }
    default:
      console.log(USAGE);
      return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
  }
}

/** Where the secured bed's CA and logins are; the passwords themselves stay in the files. */
function printSecurity(info: TestbedInfo): void {
  const { security } = info;
  if (security === undefined) return;
  console.log(`secured: Kafka SASL_SSL (SCRAM-SHA-512, ACLs), NATS TLS with users; CA ${security.caFile}`);
  console.log(`  kafka users (password files): ${Object.keys(security.kafkaPasswordFiles).join(', ')}`);
  console.log(`  nats users (password files):  ${Object.keys(security.natsPasswordFiles).join(', ')}`);
  const secrets = Object.values(security.kafkaPasswordFiles)[0];
  if (secrets !== undefined) console.log(`  password files in ${dirname(secrets)}`);
}

main(process.argv[2], process.argv.slice(3)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    if (error instanceof Error && error.cause instanceof Error)
      console.error('caused by:', error.cause.message);
    process.exit(1);
  },
);
