import type { Logger } from '../common/log';
import { createHttpSource } from '../lookup/source/http-source';
import type { Source } from '../lookup/source/source';
import { startSandbox, type Sandbox } from './server';

/**
 * Where test keys' calls fetch (docs/adr/0026-test-keys.md): the built-in sandbox network, over
 * the same HTTP source as any upstream. Started on the first test call, so an instance whose
 * clients never use a test key never builds the sandbox's world; a start that fails is tried
 * again by the next call (that call is answered `internal_error`, charged nothing).
 */
export function sandboxSourceOnDemand(options: { timeoutMs: number; logger: Logger }): { source: Source; close(): Promise<void> } {
  let started: Promise<{ sandbox: Sandbox; source: Source }> | undefined;
  let closed = false;
  const ready = () => {
    if (closed) return Promise.reject(new Error('the test keys\' sandbox is closed'));
    started ??= startSandbox({ host: '127.0.0.1', port: 0 }).then(
      (sandbox) => {
        options.logger.info({ sandbox_url: sandbox.url }, 'sandbox network started for test keys');
        return { sandbox, source: createHttpSource({ baseUrl: sandbox.url, timeoutMs: options.timeoutMs }) };
      },
      (err: unknown) => {
        started = undefined;
        options.logger.error({ err }, 'the sandbox network for test keys did not start; the next test call tries again');
        throw err;
      },
    );
    return started;
  };
  const source: Source = {
    companyBySlug: async (slug) => (await ready()).source.companyBySlug(slug),
    companyById: async (id) => (await ready()).source.companyById(id),
    companyByDomain: async (domain) => (await ready()).source.companyByDomain(domain),
    personById: async (id) => (await ready()).source.personById(id),
    personByName: async (name) => (await ready()).source.personByName(name),
    search: async (query, limit) => (await ready()).source.search(query, limit),
  };
  return {
    source,
    async close() {
      closed = true;
      const running = await started?.catch(() => undefined);
      await running?.sandbox.close();
    },
  };
}
