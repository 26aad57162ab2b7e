import { describe, expect, it } from 'vitest';
import { MAX_SEND_ATTEMPTS, afterFailedSend } from '../../../services/email/retry';
import { linksIn } from '../../../services/email/mailer';

const now = new Date('2030-01-01T00:00:00Z');
const seconds = (d: { kind: string; at?: Date }) => (d.kind === 'retry' ? (d.at!.getTime() - now.getTime()) / 1000 : NaN);

describe('afterFailedSend', () => {
  it('given a first failed attempt, when it is planned, then the next one is 15 to 30 s later', () => {
    expect(seconds(afterFailedSend(1, now, () => 0))).toBe(15);
    expect(seconds(afterFailedSend(1, now, () => 1))).toBe(30);
  });

  it('given more failures, when planned, then the wait doubles up to an hour at most', () => {
    expect(seconds(afterFailedSend(3, now, () => 1))).toBe(120);
    expect(seconds(afterFailedSend(MAX_SEND_ATTEMPTS - 1, now, () => 1))).toBe(3600);
  });

  it('given the last allowed attempt failed, when planned, then the message is given up', () => {
    expect(afterFailedSend(MAX_SEND_ATTEMPTS, now)).toEqual({ kind: 'give_up' });
  });

  it('given all retries, when summed at their longest, then they span about a day', () => {
    let total = 0;
    for (let a = 1; a < MAX_SEND_ATTEMPTS; a++) total += seconds(afterFailedSend(a, now, () => 1));
    expect(total / 3600).toBeGreaterThan(12);
    expect(total / 3600).toBeLessThan(26);
  });
});

describe('linksIn', () => {
  it('given a text with links, when read, then each link is found whole, in order', () => {
    expect(linksIn('a https://h.test/console/accept?token=x_Y-1&workspace=ws_1\nb http://h/r?x=1.')).toEqual(['https://h.test/console/accept?token=x_Y-1&workspace=ws_1', 'http://h/r?x=1.']);
  });
});
