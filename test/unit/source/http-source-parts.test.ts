import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../../services/lookup/source/http-source';
import { SingleFlight } from '../../../services/lookup/source/single-flight';

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('7', 30, now)).toBe(7);
    expect(parseRetryAfter(' 120 ', 30, now)).toBe(120);
  });

  it('reads an HTTP date as whole seconds from now, rounded up', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:42 GMT', 30, now)).toBe(42);
    expect(parseRetryAfter(new Date(now + 1500).toUTCString(), 30, now)).toBe(1);
  });

  it('never advises less than 1 second or more than an hour', () => {
    expect(parseRetryAfter('0', 30, now)).toBe(1);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', 30, now)).toBe(1);
    expect(parseRetryAfter('999999', 30, now)).toBe(3600);
  });

  it('falls back to the default when missing or unreadable', () => {
    expect(parseRetryAfter(null, 30, now)).toBe(30);
    expect(parseRetryAfter('soon', 12, now)).toBe(12);
    expect(parseRetryAfter('-5', 12, now)).toBe(12);
  });
});

describe('SingleFlight', () => {
  it('runs the work once for concurrent callers of one key and gives followers copies', async () => {
    const flights = new SingleFlight<{ n: number }>((v) => ({ ...v }));
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const work = async () => {
      runs++;
      await gate;
      return { n: 1 };
    };
    const calls = [flights.run('k', work), flights.run('k', work), flights.run('k', work)];
    expect(flights.size).toBe(1);
    release();
    const [leader, ...followers] = await Promise.all(calls);
    expect(runs).toBe(1);
    for (const f of followers) {
      expect(f).toEqual(leader);
      expect(f).not.toBe(leader);
    }
    expect(flights.size).toBe(0);
  });

  it('keeps keys apart and starts afresh once a flight settled', async () => {
    const flights = new SingleFlight<number>();
    let runs = 0;
    const work = async () => ++runs;
    expect(await Promise.all([flights.run('a', work), flights.run('b', work)])).toEqual([1, 2]);
    expect(await flights.run('a', work)).toBe(3);
  });

  it('shares a rejection and forgets the key after it', async () => {
    const flights = new SingleFlight<number>();
    const failing = () => Promise.reject(new Error('boom'));
    await expect(Promise.all([flights.run('x', failing), flights.run('x', failing)])).rejects.toThrow('boom');
    expect(flights.size).toBe(0);
    expect(await flights.run('x', async () => 5)).toBe(5);
  });
});
