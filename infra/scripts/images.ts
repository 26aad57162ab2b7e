// The project's container images, built on this machine from Debian's packages (no registry is
// needed): a Debian bookworm base made by debootstrap and `docker import`, and on it PostgreSQL 15 with
// pg_auto_failover, Redis 7 (server and Sentinel) and the Kafka broker of infra/kafka. Each image
// carries a label holding the SHA-256 of its inputs, and is built again only when they change.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ensureKafkaLib } from './kafka-broker';
import { REPO_ROOT, log, withLock } from './runtime';

/** Image names (repository:tag) of the project's images. */
export const IMAGES = {
  base: 'lookup-api/debian:bookworm',
  postgres: 'lookup-api/postgres:15',
  redis: 'lookup-api/redis:7',
  kafka: 'lookup-api/kafka:3.9',
} as const;

type ImageKind = keyof typeof IMAGES;

/** The label whose value is the SHA-256 of an image's inputs. */
const INPUTS_LABEL = 'lookup-api.inputs-sha256';
const IMAGES_DIR = join(REPO_ROOT, 'infra', 'images');
const KAFKA_DIR = join(REPO_ROOT, 'infra', 'kafka');
const DEFAULT_MIRROR = 'http://deb.debian.org/debian';

/** The host's apt configuration, copied into the base image (so its inputs). */
const APT_CONFIG_PATHS = [
  '/etc/apt/sources.list',
  '/etc/apt/sources.list.d',
  '/etc/apt/apt.conf',
  '/etc/apt/apt.conf.d',
  '/etc/apt/auth.conf',
  '/etc/apt/auth.conf.d',
  '/etc/apt/preferences',
  '/etc/apt/preferences.d',
  '/etc/apt/trusted.gpg',
  '/etc/apt/trusted.gpg.d',
  '/etc/apt/keyrings',
];

/** How long the step took, or that it was skipped, per image. */
export interface ImageOutcome {
  image: string;
  action: 'built' | 'up to date';
  seconds: number;
}

/** True when a Docker engine answers the `docker` CLI. */
export function dockerEngineAnswers(): boolean {
  const probe = spawnSync('docker', ['version', '--format', '{{.Server.Version}}'], { stdio: 'ignore', timeout: 10_000 });
  return probe.status === 0;
}

/** Builds each image whose inputs changed (or that is missing), in dependency order. */
export async function buildImages(): Promise<ImageOutcome[]> {
  return withLock('images', 30 * 60_000, async () => {
    const outcomes = [await buildBase()];
    for (const kind of ['postgres', 'redis', 'kafka'] as const) outcomes.push(await buildOnBase(kind));
    return outcomes;
  });
}

async function buildBase(): Promise<ImageOutcome> {
  const started = Date.now();
  const hash = baseInputsHash();
  if (labelOf(IMAGES.base) === hash) return done(IMAGES.base, 'up to date', started);
  if (process.getuid?.() !== 0) throw new Error(`building ${IMAGES.base} takes root (debootstrap)`);
  if (spawnSync('debootstrap', ['--version'], { stdio: 'ignore' }).error) {
    throw new Error(`building ${IMAGES.base} takes debootstrap (apt-get install -y debootstrap)`);
  }
  const rootfs = mkdtempSync(join(tmpdir(), 'lookup-api-rootfs-'));
  try {
    log(`images: ${IMAGES.base}: debootstrap bookworm from ${bookwormMirror()}`);
    await run('sh', [join(IMAGES_DIR, 'base', 'make-rootfs.sh'), rootfs, bookwormMirror()], { quiet: true });
    await run('sh', [
      '-c',
      'tar -C "$1" --numeric-owner -c . | docker import --change "$2" --change \'CMD ["/bin/bash"]\' - "$3"',
      'import',
      rootfs,
      `LABEL ${INPUTS_LABEL}=${hash}`,
      IMAGES.base,
    ]);
  } finally {
    rmSync(rootfs, { recursive: true, force: true });
  }
  return done(IMAGES.base, 'built', started);
}

async function buildOnBase(kind: Exclude<ImageKind, 'base'>): Promise<ImageOutcome> {
  const started = Date.now();
  const base = imageId(IMAGES.base);
  if (!base) throw new Error(`${IMAGES.base} is missing`);
  const context = assembleContext(kind);
  try {
    const hash = contextHash(base, context);
    if (labelOf(IMAGES[kind]) === hash) return done(IMAGES[kind], 'up to date', started);
    log(`images: ${IMAGES[kind]}: building`);
    // The host's network: apt inside the build reaches the package mirror the way the host does.
    await run('docker', ['build', '--network', 'host', '--label', `${INPUTS_LABEL}=${hash}`, '-t', IMAGES[kind], context], {
      quiet: true,
    });
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  return done(IMAGES[kind], 'built', started);
}

/** A temporary build context: the image's folder, plus Kafka's jars and configuration for Kafka. */
function assembleContext(kind: Exclude<ImageKind, 'base'>): string {
  const context = mkdtempSync(join(tmpdir(), `lookup-api-image-${kind}-`));
  cpSync(join(IMAGES_DIR, kind), context, { recursive: true });
  if (kind === 'kafka') {
    ensureKafkaLib();
    for (const file of ['server.properties', 'log4j.properties']) cpSync(join(KAFKA_DIR, file), join(context, file));
    const lib = join(KAFKA_DIR, 'lib');
    mkdirSync(join(context, 'lib'));
    for (const jar of readdirSync(lib)) linkOrCopy(join(lib, jar), join(context, 'lib', jar));
  }
  return context;
}

function linkOrCopy(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    cpSync(from, to);
  }
}

function baseInputsHash(): string {
  const hash = createHash('sha256');
  hash.update(`mirror ${bookwormMirror()}\0`);
  addFiles(hash, join(IMAGES_DIR, 'base'), [join(IMAGES_DIR, 'base')]);
  addFiles(hash, '/', APT_CONFIG_PATHS);
  return hash.digest('hex');
}

function contextHash(baseId: string, context: string): string {
  const hash = createHash('sha256');
  hash.update(`base ${baseId}\0`);
  addFiles(hash, context, [context]);
  return hash.digest('hex');
}

/** Adds each file under `paths` (name relative to `root`, mode and content) in a stable order. */
function addFiles(hash: ReturnType<typeof createHash>, root: string, paths: string[]): void {
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const stat = statSync(path);
    if (stat.isDirectory()) {
      addFiles(hash, root, readdirSync(path).sort().map((entry) => join(path, entry)));
    } else {
      hash.update(`${relative(root, path)}\0${stat.mode & 0o777}\0`);
      hash.update(readFileSync(path));
      hash.update('\0');
    }
  }
}

/** The host's Debian mirror for bookworm (its first source), so debootstrap goes where apt goes. */
function bookwormMirror(): string {
  const texts: string[] = [];
  for (const path of ['/etc/apt/sources.list', '/etc/apt/sources.list.d']) {
    if (!existsSync(path)) continue;
    if (statSync(path).isDirectory()) {
      for (const entry of readdirSync(path).sort()) {
        if (/\.(list|sources)$/.test(entry)) texts.push(readFileSync(join(path, entry), 'utf8'));
      }
    } else {
      texts.push(readFileSync(path, 'utf8'));
    }
  }
  for (const text of texts) {
    for (const stanza of text.split(/\n\s*\n/)) {
      const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1];
      if (uri && /^Suites:.*\bbookworm\b/m.test(stanza) && /^Components:.*\bmain\b/m.test(stanza)) return uri;
    }
    const line = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+bookworm\s+.*\bmain\b/m.exec(text);
    if (line?.[1]) return line[1];
  }
  return DEFAULT_MIRROR;
}

function imageId(image: string): string | undefined {
  const inspect = spawnSync('docker', ['image', 'inspect', '--format', '{{.Id}}', image], { encoding: 'utf8' });
  return inspect.status === 0 ? inspect.stdout.trim() : undefined;
}

function labelOf(image: string): string | undefined {
  const inspect = spawnSync('docker', ['image', 'inspect', '--format', `{{index .Config.Labels "${INPUTS_LABEL}"}}`, image], {
    encoding: 'utf8',
  });
  return inspect.status === 0 ? inspect.stdout.trim() : undefined;
}

/** Runs a command; with `quiet`, its output is shown only when it fails. */
function run(command: string, args: string[], { quiet = false } = {}): Promise<void> {
  return new Promise((finish, fail) => {
    // The builder the Docker engine itself ships (BuildKit's needs the buildx plug-in on newer CLIs).
    const output = quiet ? 'pipe' : 'inherit';
    const child = spawn(command, args, { stdio: ['ignore', output, output], env: { ...process.env, DOCKER_BUILDKIT: '0' } });
    const printed: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => printed.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => printed.push(chunk));
    child.once('error', fail);
    child.once('exit', (code, signal) => {
      if (code === 0) return finish();
      const tail = Buffer.concat(printed).toString('utf8').trimEnd().split('\n').slice(-40).join('\n');
      fail(new Error(`${command} ${args.slice(0, 3).join(' ')}… failed (${signal ?? `exit ${code}`})${tail ? `:\n${tail}` : ''}`));
    });
  });
}

function done(image: string, action: ImageOutcome['action'], started: number): ImageOutcome {
  const outcome = { image, action, seconds: (Date.now() - started) / 1000 };
  log(`images: ${image} ${action} in ${outcome.seconds.toFixed(1)} s`);
  return outcome;
}
