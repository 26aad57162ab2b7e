// After `tsc -p tsconfig.build.json`: the files the compiled service reads next to its code
// (SQL migrations, the console's CSS and icon, the list of common passwords), at the same relative places under dist/.
// The audit worker's boot module is plain JavaScript: tsc does not emit it.
import { cpSync } from 'node:fs';

cpSync('infra/migrations', 'dist/infra/migrations', { recursive: true, filter: (path) => !path.endsWith('.ts') });
cpSync('services/console-web/assets', 'dist/services/console-web/assets', { recursive: true });
cpSync('services/members/common-passwords.txt', 'dist/services/members/common-passwords.txt');
cpSync('services/audit/audit-worker-boot.mjs', 'dist/services/audit/audit-worker-boot.mjs');
