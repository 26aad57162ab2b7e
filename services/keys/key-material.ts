import { createHash, randomInt } from 'node:crypto';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const API_KEY_PATTERN = /^lk_live_[A-Za-z0-9]{32}$/;

/** `lk_live_` + 32 base62 characters from the CSPRNG (randomInt is unbiased). */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < 32; i++) body += BASE62[randomInt(62)];
  return `lk_live_${body}`;
}

/** Only this is stored: a leaked table gives no usable key. */
export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex');

/** What the console shows of a key: enough to tell keys apart, too little to use. */
export const keyDisplayPrefix = (key: string) => key.slice(0, 12);
