// Reading topics back in full, and a Kafka broker of the relay tests' own that they may kill.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { brokerAnswers, ensureKafkaLib } from '../../infra/scripts/kafka-broker';
import { REPO_ROOT } from '../../infra/scripts/runtime';

export interface ReadMessage {
  topic: string;
  partition: number;
  offset: number;
  key: string;
  value: string;
  headers: Record<string, string>;
}

/** Every message on `topic` up to its current end, each partition in offset order. */
export async function readWholeTopic(brokers: string[], topic: string, timeoutMs = 60_000): Promise<ReadMessage[]> {
  const kafka = new Kafka({ clientId: 'relay-test-reader', brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]));
  await admin.disconnect();
  const remaining = () => [...ends].filter(([, high]) => high > 0).length;
  const received: ReadMessage[] = [];
  if (remaining() === 0) return received;

  const consumer = kafka.consumer({ groupId: `relay-test-${randomUUID()}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  try {
    await new Promise<void>((done, failed) => {
      const timer = setTimeout(() => failed(new Error(`read ${received.length} messages of ${topic}, not all within ${timeoutMs} ms`)), timeoutMs);
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            const offset = Number(message.offset);
            if (offset >= (ends.get(partition) ?? 0)) return;
            // A rebalance while reading hands the uncommitted messages out again: each offset counts once.
            if (received.some((m) => m.partition === partition && m.offset === offset)) return;
            received.push({
              topic,
              partition,
              offset,
              key: message.key?.toString() ?? '',
              value: message.value?.toString() ?? '',
              headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])),
            });
            if (offset + 1 >= (ends.get(partition) ?? 0)) ends.set(partition, 0);
            if (remaining() === 0) {
              clearTimeout(timer);
              done();
            }
          },
        })
        .catch(failed);
    });
  } finally {
    await consumer.disconnect();
  }
  return received.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const KAFKA_DIR = join(REPO_ROOT, 'infra', 'kafka');

/**
 * A single-node KRaft broker from the jars of infra/kafka/lib, on free ports with its data in a
 * temporary folder that survives `kill()` and `start()` again: a crash and a restart, data kept.
 */
export class DedicatedBroker {
  private process: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly configPath: string,
  ) {}

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Prepares (formats) a broker without starting it. */
  static async create(): Promise<DedicatedBroker> {
    const [port, controllerPort] = [await freePort(), await freePort()];
    const dir = mkdtempSync(join(tmpdir(), 'relay-test-kafka-'));
    const configPath = join(dir, 'server.properties');
    writeFileSync(
      configPath,
      [
        'process.roles=broker,controller',
        'node.id=1',
        `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
        `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
        `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
        'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
        'inter.broker.listener.name=PLAINTEXT',
        'controller.listener.names=CONTROLLER',
        'default.replication.factor=1',
        'min.insync.replicas=1',
        'offsets.topic.replication.factor=1',
        'offsets.topic.num.partitions=1',
        'transaction.state.log.replication.factor=1',
        'transaction.state.log.min.isr=1',
        'transaction.state.log.num.partitions=1',
        'group.initial.rebalance.delay.ms=0',
        // The relay must create its topics itself.
        'auto.create.topics.enable=false',
        `log.dirs=${join(dir, 'data')}`,
        '',
      ].join('\n'),
    );
    // The shared broker may be someone else's, so this clone may not have fetched the jars yet.
    ensureKafkaLib();
    const format = spawnSync('java', javaArgs('kafka.tools.StorageTool', 'format', '-t', newClusterId(), '-c', configPath), {
      encoding: 'utf8',
    });
    if (format.status !== 0) throw new Error(`kafka storage format failed: ${format.stdout}${format.stderr}`);
    return new DedicatedBroker(port, dir, configPath);
  }

  /** Starts the broker (again) on its data and waits until it answers. */
  async start(timeoutMs = 90_000): Promise<void> {
    if (this.process) throw new Error('already running');
    const logFd = openSync(join(this.dir, 'broker.log'), 'a');
    const child = spawn('java', javaArgs('kafka.Kafka', this.configPath), { stdio: ['ignore', logFd, logFd] });
    closeSync(logFd);
    this.process = child;
    let exited = false;
    child.once('exit', () => {
      exited = true;
      if (this.process === child) this.process = undefined;
    });
    const deadline = Date.now() + timeoutMs;
    while (!(await brokerAnswers(this.address, 1_000))) {
      if (exited || Date.now() > deadline) throw new Error(`dedicated broker did not come up:\n${this.logTail()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** SIGKILL: no clean shutdown, as in a crash; or SIGTERM for an orderly stop. */
  async kill(signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    const child = this.process;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
    this.process = undefined;
  }

  async destroy(): Promise<void> {
    await this.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }

  logTail(lines = 30): string {
    try {
      return readFileSync(join(this.dir, 'broker.log'), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }
}

function javaArgs(mainClass: string, ...args: string[]): string[] {
  return ['-Xmx384m', `-Dlog4j.configuration=file:${join(KAFKA_DIR, 'log4j.properties')}`, '-cp', `${join(KAFKA_DIR, 'lib')}/*`, mainClass, ...args];
}

/**
 * A random cluster id as Kafka makes them: 16 bytes in base64url, never starting with '-' (one in
 * 64 would, and the storage tool would read it as an option: "argument --cluster-id: expected one
 * argument", which failed a CI run).
 */
function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}
