import type { Source } from './source';
import { recordLiveFetch } from '../../metrics/metrics';

type AnyCall = (...args: unknown[]) => Promise<{ kind: string; code?: string }>;

/**
 * The source port with every live fetch timed and its failures counted by code: wrapped once in
 * the composition root, so the lookup code knows nothing of metrics.
 */
export function instrumentedSource(source: Source): Source {
  const timed = <K extends keyof Source>(call: K): Source[K] => {
    const fetch = source[call].bind(source) as AnyCall;
    const wrapped: AnyCall = async (...args) => {
      const started = process.hrtime.bigint();
      const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
      try {
        const result = await fetch(...args);
        recordLiveFetch(call, result.kind, seconds(), result.kind === 'failure' ? result.code : undefined);
        return result;
      } catch (err) {
        // The lookup answers a throwing source with internal_error: counted as such.
        recordLiveFetch(call, 'failure', seconds(), 'internal_error');
        throw err;
      }
    };
    return wrapped as Source[K];
  };
  return {
    companyBySlug: timed('companyBySlug'),
    companyById: timed('companyById'),
    companyByDomain: timed('companyByDomain'),
    personById: timed('personById'),
    personByName: timed('personByName'),
    search: timed('search'),
  };
}
