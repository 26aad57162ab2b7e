import { type Config, ConfigError, describeSource, loadConfig } from '../config/config';
import { startServer } from './server';

let config: Config;
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
if (config.adminTokenSource === 'created') {
  // Printed once, on the start that made it; later starts keep it (the file says where).
  console.log(`ADMIN_TOKEN=${config.adminToken}  (generated and kept in ${config.adminTokenFile}; set ADMIN_TOKEN, at least 16 characters, to choose your own)`);
} else if (config.adminTokenSource === 'kept') {
  console.log(`ADMIN_TOKEN: the one kept in ${config.adminTokenFile}`);
}
console.log(`lookup API listening on ${server.url} (database: ${config.databaseUrl ? 'PostgreSQL' : `PGlite in ${config.dataDir}`}, Node ${process.versions.node})`);
console.log(`data source: ${describeSource(config.source)}`);

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
