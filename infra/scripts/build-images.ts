// Usage: tsx infra/scripts/build-images.ts   (npm run images)
// Builds the project's container images (infra/scripts/images.ts) that are missing or whose inputs
// changed, and prints how long each took. Needs a running Docker engine, and root and debootstrap
// for the base image.
import { buildImages, dockerEngineAnswers } from './images';
import { log } from './runtime';

async function main(): Promise<number> {
  if (!dockerEngineAnswers()) {
    log('images: no Docker engine answers (is dockerd running? /var/run/docker.sock)');
    return 1;
  }
  const started = Date.now();
  const outcomes = await buildImages();
  const built = outcomes.filter((outcome) => outcome.action === 'built').length;
  log(`images: ${built} built, ${outcomes.length - built} up to date, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    log(`images: failed: ${error.message}`);
    process.exit(1);
  },
);
