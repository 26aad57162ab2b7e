import { describe, expect, it } from 'vitest';
import { newSessionTimes, SESSION_IDLE_MS, SESSION_MAX_MS, sessionNeedsTouch, sessionState } from '../../../services/sessions/rules';

const now = new Date('2025-06-01T12:00:00Z');
const at = (ms: number) => new Date(now.getTime() + ms);

describe('sessions', () => {
  it('given a new session, then it is valid until idle for 8 h or 7 days old', () => {
    const t = { ...newSessionTimes(now), credentialVersion: 1 };
    expect(sessionState(t, at(SESSION_IDLE_MS - 1), 1)).toBe('valid');
    expect(sessionState(t, at(SESSION_IDLE_MS), 1)).toBe('idle');
    const active = { ...t, lastSeenAt: at(SESSION_MAX_MS - 1000) };
    expect(sessionState(active, at(SESSION_MAX_MS - 1), 1)).toBe('valid');
    expect(sessionState(active, at(SESSION_MAX_MS), 1)).toBe('expired');
  });
  it('given a session made with credential version 1, when the password has changed (version 2), then it is dead at once', () => {
    const t = { ...newSessionTimes(now), credentialVersion: 1 };
    expect(sessionState(t, at(1), 2)).toBe('superseded');
    expect(sessionState({ ...t, credentialVersion: 2 }, at(1), 2)).toBe('valid');
  });
  it('writes last_seen_at at most once a minute', () => {
    const t = newSessionTimes(now);
    expect(sessionNeedsTouch(t, at(59_999))).toBe(false);
    expect(sessionNeedsTouch(t, at(60_000))).toBe(true);
  });
});
