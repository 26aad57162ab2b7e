// `npm run build`'s last step: the console's browser script, bundled, next to the compiled service
// (dist/services/console-web/assets/), where services/console-web/plugin.ts reads it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { bundleConsoleScript, CONSOLE_SCRIPT } from '../../services/console-web/bundle';

mkdirSync('dist/services/console-web/assets', { recursive: true });
writeFileSync(`dist/services/console-web/assets/${CONSOLE_SCRIPT}`, await bundleConsoleScript());
