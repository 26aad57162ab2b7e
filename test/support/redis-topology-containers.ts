// A Redis topology's servers as containers of lookup-api/redis:7, one server each, all sharing the
// network namespace of a holder container (a pod) on a docker network of their own. The holder
// publishes each server's port 1:1 (host port = port inside), so 127.0.0.1:<port> means the same
// server inside the pod and on this machine: what the sentinels announce as the primary, and what
// the cluster nodes announce as themselves, is reachable from the service as it is (ADR 0015).
// Kill is `docker kill`, freeze `docker pause`, thaw `docker unpause`.
import { spawnSync } from 'node:child_process';
import { GenericContainer, Network, type StartedNetwork, type StartedTestContainer, Wait } from 'testcontainers';
import { IMAGES, buildImages } from '../../infra/scripts/images';
import type { RedisProcess, ServerRunner } from './redis-server-runner';
import { useTestcontainersDefaults } from './containers';

/** Containers and networks made here and not yet removed: removed on exit, whatever happens to the test. */
const leftContainers = new Set<string>();
const leftNetworks = new Set<string>();
process.once('exit', () => {
  if (leftContainers.size > 0) spawnSync('docker', ['rm', '-f', ...leftContainers], { stdio: 'ignore', timeout: 20_000 });
  for (const network of leftNetworks) spawnSync('docker', ['network', 'rm', network], { stdio: 'ignore', timeout: 10_000 });
});

function docker(args: string[], timeoutMs = 10_000): { status: number | null; stdout: string; output: string } {
  const r = spawnSync('docker', args, { encoding: 'utf8', timeout: timeoutMs });
  return { status: r.status, stdout: r.stdout ?? '', output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

let imagesReady: Promise<unknown> | undefined;

/** A pod publishing `ports` 1:1 on this machine; its servers are started one by one with `start`. */
export async function openPod(ports: number[]): Promise<ServerRunner> {
  useTestcontainersDefaults();
  imagesReady ??= buildImages();
  await imagesReady;
  const network: StartedNetwork = await new Network().start();
  leftNetworks.add(network.getName());
  const servers: StartedTestContainer[] = [];
  let holder: StartedTestContainer | undefined;
  const destroy = async () => {
    for (const server of servers) docker(['unpause', server.getId()]); // a paused container cannot be removed
    await Promise.allSettled(servers.map(async (server) => {
      await server.stop({ timeout: 0 });
      leftContainers.delete(server.getId());
    }));
    if (holder) {
      await holder.stop({ timeout: 0 });
      leftContainers.delete(holder.getId());
    }
    // A container whose start failed (its port taken) was created all the same, on this network.
    const created = docker(['ps', '-aq', '--filter', `network=${network.getName()}`]).stdout.split('\n').filter(Boolean);
    if (created.length > 0) docker(['rm', '-f', ...created], 20_000);
    await network.stop();
    leftNetworks.delete(network.getName());
  };
  try {
    holder = await new GenericContainer(IMAGES.redis)
      .withNetwork(network)
      .withExposedPorts(...ports.map((port) => ({ container: port, host: port })))
      .withCommand(['sh', '-c', 'echo holding the network namespace; exec sleep infinity'])
      .withWaitStrategy(Wait.forLogMessage('holding the network namespace'))
      .start();
    leftContainers.add(holder.getId());
  } catch (error) {
    await destroy();
    throw error;
  }
  const holderId = holder.getId();
  const cliInPod = (args: string[], timeoutMs: number) => docker(['exec', holderId, 'redis-cli', ...args], timeoutMs);
  return {
    async start(port, lines, sentinel = false) {
      // Bound to every interface of the pod: the published port arrives on its bridge address.
      const config = [`port ${port}`, 'bind 0.0.0.0', 'protected-mode no', 'dir /tmp', ...lines];
      const server = await new GenericContainer(IMAGES.redis)
        .withNetworkMode(`container:${holderId}`)
        .withCommand([
          'sh',
          '-c',
          `printf '%s\\n' "$@" > /tmp/${port}.conf && exec redis-server /tmp/${port}.conf${sentinel ? ' --sentinel' : ''}`,
          'sh',
          ...config,
        ])
        .withWaitStrategy(Wait.forSuccessfulCommand(`redis-cli -p ${port} ping | grep -q PONG`).withStartupTimeout(10_000))
        .start();
      servers.push(server);
      leftContainers.add(server.getId());
      return containerServer(server, port, holderId);
    },
    cli: cliInPod,
    destroy,
  };
}

function containerServer(server: StartedTestContainer, port: number, holderId: string): RedisProcess {
  const id = server.getId();
  return {
    port,
    async kill() {
      docker(['kill', id]);
      docker(['wait', id], 20_000);
    },
    freeze() {
      const paused = docker(['pause', id]);
      if (paused.status !== 0) throw new Error(`docker pause failed: ${paused.output}`);
    },
    thaw() {
      docker(['unpause', id]);
    },
    // From the holder, which is never paused: a paused server just does not answer, as a process would.
    cli: (...args) => docker(['exec', holderId, 'redis-cli', '-p', String(port), ...args], 2_000).stdout.trim(),
    logTail: (lines = 30) => docker(['logs', '--tail', String(lines), id]).output.trimEnd() || '(no log)',
  };
}
