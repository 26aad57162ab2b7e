import { describe, expect, it } from 'vitest';
import { claimOneByOne } from '../../../services/common/claim-one-by-one';

/** A queue of items and a log of what happened, in order. */
function queue(items: string[]) {
  const left = [...items];
  const log: string[] = [];
  return {
    log,
    claim: async () => {
      const item = left.shift();
      log.push(`claim ${item ?? '-'}`);
      return item;
    },
    process: async (item: string) => {
      await new Promise((r) => setImmediate(r));
      log.push(`done ${item}`);
    },
  };
}

describe('claimOneByOne', () => {
  it('given three items, when a pass runs, then each is claimed only after the one before it is done', async () => {
    const q = queue(['a', 'b', 'c']);
    expect(await claimOneByOne({ claim: q.claim, process: q.process })).toBe(3);
    expect(q.log).toEqual(['claim a', 'done a', 'claim b', 'done b', 'claim c', 'done c', 'claim -']);
  });

  it('given a limit, when a pass reaches it, then nothing more is claimed', async () => {
    const q = queue(['a', 'b', 'c']);
    expect(await claimOneByOne({ claim: q.claim, process: q.process, limit: 2 })).toBe(2);
    expect(q.log).toEqual(['claim a', 'done a', 'claim b', 'done b']);
  });

  it('given a stop asked while an item is processed, when it is done, then nothing more is claimed', async () => {
    const q = queue(['a', 'b']);
    let stopped = false;
    const processed = await claimOneByOne({
      claim: q.claim,
      process: async (item) => {
        stopped = true;
        await q.process(item);
      },
      stopped: () => stopped,
    });
    expect(processed).toBe(1);
    expect(q.log).toEqual(['claim a', 'done a']);
  });

  it('given a process that throws, when the pass runs, then it ends with that error and claims nothing more', async () => {
    const q = queue(['a', 'b']);
    const pass = claimOneByOne({
      claim: q.claim,
      process: async () => {
        throw new Error('broken');
      },
    });
    await expect(pass).rejects.toThrow('broken');
    expect(q.log).toEqual(['claim a']);
  });
});
