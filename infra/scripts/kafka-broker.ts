// A single-node Apache Kafka broker (KRaft, broker + controller in one JVM) run from the jars that
// infra/kafka/pom.xml pulls from Maven Central. Data lives in a throwaway runtime folder that is
// wiped at every start, so each start is a fresh, fast, empty cluster.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import {
  REPO_ROOT,
  RUN_DIR,
  ensureRunDir,
  isPortOpen,
  isProcessAlive,
  log,
  processCommandLine,
  readJson,
  removeFile,
  sleep,
  terminate,
} from './runtime';

export const LOCAL_BROKER = '127.0.0.1:9092';
const KAFKA_DIR = join(REPO_ROOT, 'infra', 'kafka');
const LIB_DIR = join(KAFKA_DIR, 'lib');
// Fixed, so a re-format of the same folder is a no-op (base64 of 16 bytes, as Kafka requires).
const CLUSTER_ID = 'q1Sh-9_ISia_zwGINzRvyQ';
const START_TIMEOUT_MS = 90_000;

const STATE_PATH = join(RUN_DIR, 'kafka.json');
const LEASES_DIR = join(RUN_DIR, 'kafka-leases');
const DATA_DIR = join(RUN_DIR, 'kafka-data');
const CONFIG_PATH = join(RUN_DIR, 'kafka-server.properties');
export const BROKER_LOG_PATH = join(RUN_DIR, 'kafka.log');

/** Who asked for the broker: tests stop it when the last test run ends; `infra up` keeps it. */
export type BrokerOwner = 'with-servers' | 'infra-up';

interface BrokerState {
  pid: number;
  owner: BrokerOwner;
  startedAt: string;
}

/** True when a Kafka broker at `brokers` answers a describe-cluster request. */
export async function brokerAnswers(brokers: string, timeoutMs = 2_000): Promise<boolean> {
  const kafka = new Kafka({
    clientId: 'infra-probe',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    connectionTimeout: Math.min(timeoutMs, 1_000),
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.brokers.length > 0;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Asks for a consumer group's coordinator, which makes the broker create its offsets topic now,
 * so the first test that joins a consumer group does not meet "group coordinator not available".
 */
export async function waitForGroupCoordinator(brokers: string): Promise<void> {
  const kafka = new Kafka({
    clientId: 'infra-warm-up',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1_000 },
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.describeGroups(['infra-warm-up']);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** The broker these scripts started and that is still running, if any. */
export function runningBrokerState(): BrokerState | undefined {
  const state = readJson<BrokerState>(STATE_PATH);
  if (!state) return undefined;
  if (isProcessAlive(state.pid) && processCommandLine(state.pid).includes('kafka.Kafka')) return state;
  removeFile(STATE_PATH);
  return undefined;
}

export function setBrokerOwner(owner: BrokerOwner): void {
  const state = runningBrokerState();
  if (state && state.owner !== owner) writeFileSync(STATE_PATH, JSON.stringify({ ...state, owner }));
}

// A lease is a file named after the pid of a test run that uses the broker. The run that ends last
// stops a broker that test runs started, so concurrent runs never pull it from under each other.
export function takeLease(): void {
  mkdirSync(LEASES_DIR, { recursive: true });
  writeFileSync(join(LEASES_DIR, String(process.pid)), '');
}

export function dropLease(): void {
  removeFile(join(LEASES_DIR, String(process.pid)));
}

export function liveLeaseHolders(): number[] {
  if (!existsSync(LEASES_DIR)) return [];
  const holders: number[] = [];
  for (const name of readdirSync(LEASES_DIR)) {
    const pid = Number(name);
    if (Number.isInteger(pid) && isProcessAlive(pid)) holders.push(pid);
    else removeFile(join(LEASES_DIR, name));
  }
  return holders;
}

function kafkaVersionFromPom(): string {
  const pom = readFileSync(join(KAFKA_DIR, 'pom.xml'), 'utf8');
  const version = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(pom)?.[1];
  if (!version) throw new Error('infra/kafka/pom.xml has no <kafka.version>');
  return version;
}

function requireCommand(command: string, installHint: string): void {
  const probe = spawnSync(command, ['-version'], { stdio: 'ignore' });
  if (probe.error) throw new Error(`${command} is not installed; ${installHint}`);
}

/** Copies the Kafka jars into infra/kafka/lib with Maven unless the pom's version is already there. */
export function ensureKafkaLib(): void {
  const version = kafkaVersionFromPom();
  const serverJar = join(LIB_DIR, `kafka_2.13-${version}.jar`);
  if (existsSync(serverJar)) return;
  requireCommand('mvn', 'install Maven (apt-get install -y maven) to fetch the Kafka jars');
  log(`kafka: infra/kafka/lib lacks kafka_2.13-${version}.jar; fetching Kafka ${version} from Maven Central`);
  const started = Date.now();
  rmSync(LIB_DIR, { recursive: true, force: true });
  const build = spawnSync('mvn', ['-q', '-B', 'dependency:copy-dependencies', '-DoutputDirectory=lib'], {
    cwd: KAFKA_DIR,
    stdio: 'inherit',
  });
  if (build.status !== 0 || !existsSync(serverJar)) {
    throw new Error(`mvn could not copy the Kafka jars into ${LIB_DIR} (exit ${build.status ?? build.signal})`);
  }
  log(`kafka: jars copied into infra/kafka/lib in ${seconds(Date.now() - started)}`);
}

function javaArgs(mainClass: string, ...args: string[]): string[] {
  return [
    '-Xmx512m',
    `-Dlog4j.configuration=file:${join(KAFKA_DIR, 'log4j.properties')}`,
    '-cp',
    `${LIB_DIR}/*`,
    mainClass,
    ...args,
  ];
}

function brokerLogTail(lines = 30): string {
  if (!existsSync(BROKER_LOG_PATH)) return '(no broker log)';
  return readFileSync(BROKER_LOG_PATH, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** Formats a fresh data folder, starts the broker in the background and waits until it answers. */
export async function startBroker(owner: BrokerOwner): Promise<void> {
  requireCommand('java', 'install a JDK (apt-get install -y default-jdk-headless) to run Kafka');
  ensureKafkaLib();
  ensureRunDir();
  rmSync(DATA_DIR, { recursive: true, force: true });
  const template = readFileSync(join(KAFKA_DIR, 'server.properties'), 'utf8');
  writeFileSync(CONFIG_PATH, `${template}\nlog.dirs=${DATA_DIR}\n`);

  const started = Date.now();
  const format = spawnSync(
    'java',
    javaArgs('kafka.tools.StorageTool', 'format', '-t', CLUSTER_ID, '-c', CONFIG_PATH, '--ignore-formatted'),
    { encoding: 'utf8' },
  );
  if (format.status !== 0) {
    throw new Error(`Kafka storage format failed (exit ${format.status}):\n${format.stdout}${format.stderr}`);
  }

  const logFd = openSync(BROKER_LOG_PATH, 'w');
  const broker = spawn('java', javaArgs('kafka.Kafka', CONFIG_PATH), {
    cwd: KAFKA_DIR,
    detached: true,
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  const pid = broker.pid;
  if (pid === undefined) throw new Error('could not spawn java for the Kafka broker');
  broker.unref();
  const state: BrokerState = { pid, owner, startedAt: new Date().toISOString() };
  writeFileSync(STATE_PATH, JSON.stringify(state));

  const deadline = started + START_TIMEOUT_MS;
  while (!(await brokerAnswers(LOCAL_BROKER, 1_000))) {
    if (!isProcessAlive(pid)) {
      removeFile(STATE_PATH);
      throw new Error(`the Kafka broker exited during startup; last lines of ${BROKER_LOG_PATH}:\n${brokerLogTail()}`);
    }
    if (Date.now() > deadline) {
      await stopBroker();
      throw new Error(
        `the Kafka broker did not answer on ${LOCAL_BROKER} within ${START_TIMEOUT_MS / 1000} s; ` +
          `last lines of ${BROKER_LOG_PATH}:\n${brokerLogTail()}`,
      );
    }
    await sleep(200);
  }
  await waitForGroupCoordinator(LOCAL_BROKER);
  log(`kafka: broker started and answering on ${LOCAL_BROKER} in ${seconds(Date.now() - started)} (pid ${pid}, log ${BROKER_LOG_PATH})`);
}

/** Stops the broker these scripts started, if it is running, and removes its data. */
export async function stopBroker(): Promise<boolean> {
  const state = runningBrokerState();
  removeFile(STATE_PATH);
  if (!state) return false;
  const started = Date.now();
  await terminate(state.pid, 20_000);
  rmSync(DATA_DIR, { recursive: true, force: true });
  log(`kafka: stopped the broker (pid ${state.pid}) in ${seconds(Date.now() - started)}`);
  return true;
}

/** Waits for something already listening on the broker port to start answering as Kafka. */
export async function waitForForeignBroker(timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await brokerAnswers(LOCAL_BROKER, 1_000)) return true;
    if (!(await isPortOpen('127.0.0.1', 9092))) return false;
    await sleep(500);
  }
  return false;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
