// The launcher lives in packages/testbed (the sandbox runs it from the build); tests import it from here.
export {
  bedKafkaCredentials,
  createCertificateAuthority,
  issueCertificate,
  readTestbedFile,
  REPO_ROOT,
  restartTestbedNats,
  startTestbed,
  stopTestbed,
  TestbedError,
  testbedStateFile,
  writeTestbedFile,
  type KafkaClientCredentials,
  type SecureTestbedOptions,
  type TestbedInfo,
  type TestbedSecurityInfo,
} from '@offsetsync/testbed';
