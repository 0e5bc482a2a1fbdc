// The launcher lives in packages/testbed (the sandbox runs it from the build); tests import it from here.
export {
  ensureKafkaDistribution,
  infraCacheDir,
  KAFKA_VERSION,
  type KafkaDistribution,
} from '@offsetsync/testbed';
