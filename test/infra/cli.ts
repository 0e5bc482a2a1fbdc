// `npm run infra -- up|down|status`: the test bed from the command line.
import { rm } from 'node:fs/promises';
import { ensureKafkaDistribution } from './kafka-dist.js';
import { isAlive } from './processes.js';
import { readTestbedFile, startTestbed, stopTestbed, testbedStateFile, writeTestbedFile } from './testbed.js';

const USAGE = `usage: npm run infra -- <command>

  fetch   put the Kafka broker, tools and MirrorMaker 2 jars in the cache (Maven; nothing is
          downloaded when they are there)
  up      start a source and a target Kafka cluster and a JetStream server on free loopback ports,
          print their addresses and write them to ${testbedStateFile()}
  down    stop every process 'up' started and remove its data
  status  print the state file and whether each process still runs`;

async function main(command: string | undefined): Promise<number> {
  const stateFile = testbedStateFile();
  switch (command) {
    case 'fetch': {
      const dist = await ensureKafkaDistribution({ log: (line) => console.error(line) });
      console.log(
        `Kafka ${dist.version} jars ${dist.fetched ? 'fetched into' : 'already in'} ${dist.libDir}`,
      );
      return 0;
    }
    case 'up': {
      const existing = await readTestbedFile(stateFile);
      if (existing && [existing.source.pid, existing.target.pid, existing.nats.pid].some(isAlive)) {
        console.error(`a test bed is already up (${stateFile}); run 'npm run infra -- down' first`);
        return 1;
      }
      const info = await startTestbed({ log: (line) => console.error(line) });
      await writeTestbedFile(stateFile, info);
      console.log(`source   ${info.source.bootstrapServers}   (cluster id ${info.source.clusterId})`);
      console.log(`target   ${info.target.bootstrapServers}   (cluster id ${info.target.clusterId})`);
      console.log(`nats     ${info.nats.url}`);
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
      return 0;
    }
    default:
      console.log(USAGE);
      return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
  }
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    if (error instanceof Error && error.cause instanceof Error)
      console.error('caused by:', error.cause.message);
    process.exit(1);
  },
);
