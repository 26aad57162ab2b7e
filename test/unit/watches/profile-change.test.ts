import { describe, expect, it } from 'vitest';
import { detectProfileChange } from '../../../services/watches/profile-change';

const h = (c: string) => `sha256:${c.repeat(64)}`;

describe('profile change detection', () => {
  it('given nothing seen before, when a profile is refreshed, then it is the baseline, not a change', () => {
    expect(detectProfileChange(null, { contentHash: h('a'), data: { name: 'Acme' } })).toEqual({ changed: false });
  });

  it('given the same content_hash, then no change', () => {
    expect(detectProfileChange({ contentHash: h('a'), data: { name: 'Acme' } }, { contentHash: h('a'), data: { name: 'Acme' } })).toEqual({ changed: false });
  });

  it('given another content_hash, then the top-level fields added, removed or changed are named, sorted', () => {
    const before = { contentHash: h('a'), data: { name: 'Acme', follower_count: 10, industries: ['x'], logo: 'l', address: { city: 'A', zip: '1' } } };
    const after = { contentHash: h('b'), data: { address: { zip: '1', city: 'B' }, name: 'Acme', follower_count: 11, industries: ['x'], website: 'w' } };
    expect(detectProfileChange(before, after)).toEqual({ changed: true, beforeHash: h('a'), afterHash: h('b'), changedFields: ['address', 'follower_count', 'logo', 'website'] });
  });

  it('given objects whose keys come in another order only, then that field is unchanged', () => {
    const before = { contentHash: h('a'), data: { address: { city: 'A', zip: '1' }, n: 1 } };
    const after = { contentHash: h('b'), data: { address: { zip: '1', city: 'A' }, n: 2 } };
    expect(detectProfileChange(before, after)).toMatchObject({ changedFields: ['n'] });
  });
});
