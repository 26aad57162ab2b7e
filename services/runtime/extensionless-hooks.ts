import type { ResolveHook } from 'node:module';

/**
 * Node's ESM resolver wants the extension of a relative import; the sources import without one
 * (`./config/config`, `./routes`), as tsx and vitest resolve them. For the compiled service
 * (dist/), a relative specifier with no extension resolves to `<specifier>.js`, else
 * `<specifier>/index.js`. Goes once every relative import carries `.js`
 * (infra/scripts/add-import-extensions.ts).
 */
export const resolve: ResolveHook = async (specifier, context, nextResolve) => {
  if (/^\.\.?\//.test(specifier) && !/\.(?:[cm]?js|json|node)$/.test(specifier)) {
    for (const candidate of [`${specifier}.js`, `${specifier}/index.js`]) {
      try {
        return await nextResolve(candidate, context);
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'ERR_UNSUPPORTED_DIR_IMPORT') throw err;
      }
    }
  }
  return nextResolve(specifier, context);
};
