import { startSandbox } from './server';

/** `npm run sandbox`: the sandbox network alone, for pointing SOURCE_URL at it. */
const host = process.env.HOST?.trim() || '127.0.0.1';
const portText = process.env.SANDBOX_PORT?.trim() || '4010';
const port = Number(portText);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`SANDBOX_PORT must be an integer from 0 to 65535, got "${portText}"`);
  process.exit(1);
}

const startedAt = performance.now();
const sandbox = await startSandbox({ host, port });
console.log(`sandbox network listening on ${sandbox.url} (ready in ${Math.round(performance.now() - startedAt)} ms)`);

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: stopping sandbox network`);
  await sandbox.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
