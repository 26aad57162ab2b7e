import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Password hashes: scrypt (memory-hard), a 16-byte random salt per hash, parameters stored with
 * the hash so they can be raised later without invalidating old ones.
 * Format: `scrypt$<log2 N>$<r>$<p>$<salt base64url>$<hash base64url>`.
 */

const LOG2_N = 15; // N = 32768, r = 8: 32 MiB per hash
const R = 8;
const P = 1;
const KEY_BYTES = 32;

function scryptAsync(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // maxmem above the 128 * N * r the parameters need (Node's default is exactly 32 MiB).
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, { ...options, maxmem: 256 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, { N: 2 ** LOG2_N, r: R, p: P });
  return ['scrypt', LOG2_N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether `password` matches `stored`; compared in constant time. A malformed hash matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [logN, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![logN, r, p].every((n) => Number.isInteger(n) && n > 0) || logN > 20) return false;
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  const key = await scryptAsync(password, salt, { N: 2 ** logN, r, p });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * A hash of nothing anyone knows: a sign-in for an email with no member still runs one scrypt,
 * so the answer's timing does not tell which emails are members.
 */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(32).toString('base64url'));
  return decoy;
}
