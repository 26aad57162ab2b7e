import { parseList, type Item } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import { rateLimitHeaders, readingOf } from '../../../services/http/rate-limit-headers';

const parsed = (value: string) => {
  const [[name, params]] = parseList(value) as [Item];
  return [name, Object.fromEntries(params)];
};

describe('rateLimitHeaders: one bucket, five headers (docs/api.md, Limits)', () => {
  it('given a token taken with some left, then the structured fields carry the same size, remainder and reset', () => {
    const headers = rateLimitHeaders('key', readingOf({ allowed: true, limit: 600, remaining: 599, resetSeconds: 1, retryAfterSeconds: 0 }));
    expect(headers).toEqual({
      'RateLimit-Limit': '600',
      'RateLimit-Remaining': '599',
      'RateLimit-Reset': '1',
      'RateLimit-Policy': '"key";q=600;w=60',
      RateLimit: '"key";r=599;t=1',
    });
    expect(parsed(headers['RateLimit-Policy']!)).toEqual(['key', { q: 600, w: 60 }]);
    expect(parsed(headers.RateLimit!)).toEqual(['key', { r: 599, t: 1 }]);
  });

  it('given a refusal, then t is the Retry-After (the draft: Retry-After never before t), RateLimit-Reset still the time to full', () => {
    const headers = rateLimitHeaders('ip', readingOf({ allowed: false, limit: 120, remaining: 0, resetSeconds: 60, retryAfterSeconds: 1 }));
    expect([headers['RateLimit-Reset'], headers.RateLimit]).toEqual(['60', '"ip";r=0;t=1']);
  });

  it('given the last token taken (allowed, none left), then t is when the next one is back at most (60/limit s), not when the bucket is full', () => {
    expect(rateLimitHeaders('console', readingOf({ allowed: true, limit: 600, remaining: 0, resetSeconds: 60, retryAfterSeconds: 0 })).RateLimit).toBe('"console";r=0;t=1');
    expect(rateLimitHeaders('key', readingOf({ allowed: true, limit: 2, remaining: 0, resetSeconds: 45, retryAfterSeconds: 0 })).RateLimit).toBe('"key";r=0;t=30');
    // Never past the time to full.
    expect(rateLimitHeaders('key', readingOf({ allowed: true, limit: 1, remaining: 0, resetSeconds: 60, retryAfterSeconds: 0 })).RateLimit).toBe('"key";r=0;t=60');
  });
});
