import { readFileSync } from 'node:fs';
import { commonPasswordForm } from './rules';

let loaded: ReadonlySet<string> | undefined;

/** The list shipped beside this file (one password a line, `#` comments), read once per process. */
export function loadCommonPasswords(): ReadonlySet<string> {
  loaded ??= readCommonPasswords();
  return loaded;
}

function readCommonPasswords(): ReadonlySet<string> {
  const text = readFileSync(new URL('./common-passwords.txt', import.meta.url), 'utf8');
  return new Set(
    text
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'))
      .map(commonPasswordForm),
  );
}
