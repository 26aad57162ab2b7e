import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleConsoleScript, cachedConsoleScript } from '../../../services/console-web/bundle';

const CACHE = join(tmpdir(), 'lookup-api-console-script');
/** This checkout's record: the one naming this checkout's browser entry among its inputs. */
const ownRecord = () =>
  readdirSync(CACHE)
    .filter((f) => f.endsWith('.json'))
    .map((f) => join(CACHE, f))
    .find((f) => readFileSync(f, 'utf8').includes(new URL('../../../services/console-web/browser/main.ts', import.meta.url).pathname))!;

describe('the console script bundled from source, cached on disk', () => {
  it('given a cached bundle, then it is byte for byte a fresh bundle of the same sources', async () => {
    await cachedConsoleScript();
    expect(Buffer.from(await cachedConsoleScript()).equals(Buffer.from(await bundleConsoleScript()))).toBe(true);
  });

  it('given a cached bundle that no longer matches its sources, then it is bundled again', async () => {
    await cachedConsoleScript();
    const record = JSON.parse(readFileSync(ownRecord(), 'utf8')) as { inputs: string[]; hash: string };
    // The stored bundle says otherwise than its sources would: as if a source changed since.
    writeFileSync(join(CACHE, `${record.hash}.js`), 'stale');
    writeFileSync(ownRecord(), JSON.stringify({ ...record, hash: 'f'.repeat(64) }));
    writeFileSync(join(CACHE, `${'f'.repeat(64)}.js`), 'stale');
    expect(Buffer.from(await cachedConsoleScript()).equals(Buffer.from(await bundleConsoleScript()))).toBe(true);
  });
});
