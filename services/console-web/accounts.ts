import type { EventStore } from '../eventstore/event-store';
import { HashingQueue } from '../members/hashing';
import { Membership } from '../members/membership';
import { PasswordResets } from '../members/password-reset';
import { Sessions } from '../sessions/sessions';
import { PasswordAttempts } from '../sign-in-throttle/password-attempts';

/**
 * The console's people side, composed once: membership and sessions share one throttle of
 * password checks and one hashing queue (every scrypt of the instance goes through it).
 */
export function consoleAccounts(store: EventStore, clock: () => Date = () => new Date()) {
  const hashing = new HashingQueue();
  const passwords = new PasswordAttempts(store.sql, hashing, clock);
  const sessions = new Sessions(store.sql, passwords, clock);
  return { membership: new Membership(store, sessions, passwords, hashing, clock), sessions, passwordResets: new PasswordResets(store, hashing, clock) };
}
