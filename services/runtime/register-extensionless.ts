// `node --import ./dist/services/runtime/register-extensionless.js ...`: see extensionless-hooks.ts.
import { register } from 'node:module';

register('./extensionless-hooks.js', import.meta.url);
