import { ConfigError, loadConfig } from '../config/config';
import { startServer } from './server';

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(1);
  }
  throw err;
}

const server = await startServer(config);
if (config.adminTokenGenerated) {
  // Printed once: it is not stored anywhere. Set ADMIN_TOKEN to keep one across restarts.
  console.log(`ADMIN_TOKEN=${config.adminToken}  (generated; set ADMIN_TOKEN to choose your own)`);
}
console.log(`lookup API listening on ${server.url} (database: ${config.databaseUrl ? 'PostgreSQL' : `PGlite in ${config.dataDir}`})`);

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    server.close().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
}
