import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyFingerprintSet } from '../../../services/keys/key-fingerprint-set';

const randomHash = () => randomBytes(32).toString('hex');

describe('the key fingerprint set', () => {
  it('given added hashes, then each is found and others are not', () => {
    const set = new KeyFingerprintSet();
    const added = Array.from({ length: 100 }, randomHash);
    for (const hash of added) set.add(hash);
    expect(set.size).toBe(100);
    for (const hash of added) expect(set.has(hash)).toBe(true);
    for (let i = 0; i < 100; i++) expect(set.has(randomHash())).toBe(false);
  });

  it('given the same hash twice, then it counts once', () => {
    const set = new KeyFingerprintSet();
    const hash = createHash('sha256').update('lk_live_x').digest('hex');
    set.add(hash);
    set.add(hash.toUpperCase());
    expect(set.size).toBe(1);
  });

  it('given far more hashes than its first capacity, then it grows and loses none', () => {
    const set = new KeyFingerprintSet(16);
    const added = Array.from({ length: 50_000 }, randomHash);
    for (const hash of added) set.add(hash);
    expect(set.size).toBe(50_000);
    expect(added.every((hash) => set.has(hash))).toBe(true);
  });

  it('given hashes that share their first 64 bits, then they are one fingerprint: a later one reads as present', () => {
    const set = new KeyFingerprintSet();
    set.add(`0123456789abcdef${'0'.repeat(48)}`);
    expect(set.has(`0123456789abcdef${'f'.repeat(48)}`)).toBe(true);
  });

  it('given the all-zero fingerprint, then it is kept apart from an empty slot', () => {
    const set = new KeyFingerprintSet();
    expect(set.has('0'.repeat(64))).toBe(false);
    set.add('0'.repeat(64));
    expect(set.has('0'.repeat(64))).toBe(true);
    expect(set.size).toBe(1);
  });

  it('given something that is not a hex hash, then it is refused', () => {
    expect(() => new KeyFingerprintSet().add('lk_live_not_a_hash')).toThrow(RangeError);
  });

  it('given a million keys, then the table takes 16 MiB (8 bytes a slot, at most half full)', () => {
    const set = new KeyFingerprintSet();
    const bytes = randomBytes(8 * 1_000_000);
    for (let i = 0; i < 1_000_000; i++) set.add(bytes.toString('hex', 8 * i, 8 * i + 8));
    expect(set.size).toBeGreaterThan(999_990); // 64-bit fingerprints of random bytes: a repeat is next to impossible
    expect(set.bytes).toBe(16 * 1024 * 1024);
    console.log(`key set: ${set.size} fingerprints in ${(set.bytes / 2 ** 20).toFixed(1)} MiB`);
  });
});
