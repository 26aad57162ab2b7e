import { consoleRoutes } from '../../console-web/plugin';
import { adminRoutes } from './admin';
import { batchRoutes } from './batch';
import { cacheRoutes } from './cache';
import { lookupRoutes } from './lookups';
import { metaRoutes } from './meta';
import { metricsRoutes } from './metrics';
import { paymentRefusalsRecorder } from '../plugins/payment-refusals';

/** Every route plugin; each registers its rows of the route table (contracts/endpoints.ts). */
/** The console (services/console-web) registers its own pages and /console/v1 calls. */
export const routePlugins = [metaRoutes, lookupRoutes, batchRoutes, cacheRoutes, adminRoutes, consoleRoutes, metricsRoutes, paymentRefusalsRecorder];
