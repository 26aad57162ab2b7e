import { adminRoutes } from './admin';
import { batchRoutes } from './batch';
import { cacheRoutes } from './cache';
import { lookupRoutes } from './lookups';
import { metaRoutes } from './meta';
import { metricsRoutes } from './metrics';

/** The API's route plugins; each registers its rows of the route table (contracts/endpoints.ts). */
export const routePlugins = [metaRoutes, lookupRoutes, batchRoutes, cacheRoutes, adminRoutes, metricsRoutes];
