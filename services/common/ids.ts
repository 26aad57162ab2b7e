import { createHash, randomBytes, randomInt } from 'node:crypto';
import { ulid } from 'ulid';

/**
 * ULID randomness from a pooled CSPRNG buffer: ulid's default asks the OS once per character,
 * which showed up as ~12% of a busy server's CPU. A byte / 256 maps evenly onto 32 symbols.
 */
let pool = Buffer.alloc(0);
let offset = 0;
function pooledRandom(): number {
  if (offset >= pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  return pool[offset++]! / 256;
}
const newUlid = () => ulid(undefined, pooledRandom);

export const newRequestId = () => `req_${newUlid()}`;
export const newWorkspaceId = () => `ws_${newUlid()}`;
export const newKeyId = () => `key_${newUlid()}`;

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const API_KEY_PATTERN = /^lk_live_[A-Za-z0-9]{32}$/;
export const REQUEST_ID_PATTERN = /^req_[0-9A-HJKMNP-TV-Z]{26}$/;

/** `lk_live_` + 32 base62 characters from the CSPRNG (randomInt is unbiased). */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < 32; i++) body += BASE62[randomInt(62)];
  return `lk_live_${body}`;
}

export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex');

/** What the console shows of a key: enough to tell keys apart, too little to use. */
export const keyDisplayPrefix = (key: string) => key.slice(0, 12);
