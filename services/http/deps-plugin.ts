import fp from 'fastify-plugin';
import type { AppDeps } from './deps';
import type { LoadShedder } from './load-shedder';

export const DEPS_PLUGIN = 'app-deps';

/** The adapters and the load shedder, decorated on the instance for the route plugins. */
export const depsPlugin = fp<{ deps: AppDeps; shedder: LoadShedder }>(
  async (app, { deps, shedder }) => {
    app.decorate('deps', deps);
    app.decorate('shedder', shedder);
  },
  { name: DEPS_PLUGIN, fastify: '5.x' },
);
