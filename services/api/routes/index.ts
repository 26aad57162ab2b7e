import { adminRoutes } from './admin';
import { batchRoutes } from './batch';
import { cacheRoutes } from './cache';
import { lookupRoutes } from './lookups';
import { metaRoutes } from './meta';
import { metricsRoutes } from './metrics';
import { watchRoutes } from './watches';
import { webhookRoutes } from './webhooks';

/** The API's route plugins; each registers its rows of the route table (contracts/endpoints.ts). */
export const routePlugins = [metaRoutes, lookupRoutes, batchRoutes, cacheRoutes, webhookRoutes, watchRoutes, adminRoutes, metricsRoutes];
