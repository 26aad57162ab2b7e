import { createHash, randomInt } from 'node:crypto';
import type { KeyMode } from '../../contracts/events';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** A live key (`lk_live_…`) or a test key (`lk_test_…`): the mode is readable from the key itself. */
export const API_KEY_PATTERN = /^lk_(?:live|test)_[A-Za-z0-9]{32}$/;

/** `lk_<mode>_` + 32 base62 characters from the CSPRNG (randomInt is unbiased). */
export function generateApiKey(mode: KeyMode = 'live'): string {
  let body = '';
  for (let i = 0; i < 32; i++) body += BASE62[randomInt(62)];
  return `lk_${mode}_${body}`;
}

/** The mode a key's prefix names. */
export const modeOfKey = (key: string): KeyMode => (key.startsWith('lk_test_') ? 'test' : 'live');

/** Only this is stored: a leaked table gives no usable key. */
export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex');

/** What the console shows of a key: enough to tell keys apart, too little to use. */
export const keyDisplayPrefix = (key: string) => key.slice(0, 12);
