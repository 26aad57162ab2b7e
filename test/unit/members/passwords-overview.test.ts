import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Operation } from '../../../contracts/events';
import { readCookie } from '../../../services/http/admission/session';
import { renderPage, CONSOLE_PAGES } from '../../../services/console-web/pages';
import { hashPassword, verifyPassword } from '../../../services/members/passwords';
import { PASSWORD_MIN_CHARS } from '../../../services/members/rules';
import { toCsv } from '../../../services/common/csv';
import { overviewFrom, overviewOf } from '../../../services/members/overview';

describe('password hashes (scrypt)', () => {
  it('given a hash, then only the same password verifies, and two hashes of one password differ (salt)', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterY', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });
  it('given a malformed stored hash, then nothing verifies', async () => {
    expect(await verifyPassword('x', 'plain')).toBe(false);
    expect(await verifyPassword('x', 'scrypt$99$8$1$AAAA$AAAA')).toBe(false);
  });
});

describe('overview numbers', () => {
  const row = (day: string, operation: string, calls: number, charged: number, refunded = 0) => ({
    day, key_id: 'key_1', operation, calls, credits_charged: charged, credits_refunded: refunded, errors: 0,
  });
  it('given usage rows, then today and this month are charged minus refunded, and the chart has 30 days split by operation', () => {
    const today = '2025-06-03';
    const rows = [row('2025-05-20', 'company', 2, 2), row('2025-06-01', 'search', 1, 1), row('2025-06-03', 'company', 3, 3, 1), row('2025-06-03', 'domain', 1, 4)];
    const o = overviewOf(rows, today);
    expect(o.spent_today).toBe(6);
    expect(o.spent_this_month).toBe(7);
    expect(o.days).toHaveLength(30);
    expect(o.days[0]!.day).toBe('2025-05-05');
    expect(o.days[29]).toEqual({ day: today, operations: [{ operation: 'company', calls: 3, credits: 2 }, { operation: 'domain', calls: 1, credits: 4 }] });
    expect(o.days.find((d) => d.day === '2025-05-20')!.operations).toEqual([{ operation: 'company', calls: 2, credits: 2 }]);
  });
  it('reads from the earlier of the chart start and the month start', () => {
    expect(overviewFrom('2025-06-03')).toBe('2025-05-05');
    expect(overviewFrom('2025-07-31')).toBe('2025-07-01');
  });
});

describe('CSV', () => {
  it('quotes fields with commas, quotes or line breaks, and defuses spreadsheet formulas in text', () => {
    expect(toCsv(['a', 'b'], [[1, null], ['x,y', 'say "hi"'], ['=SUM(A1)', -3]])).toBe('a,b\r\n1,\r\n"x,y","say ""hi"""\r\n\'=SUM(A1),-3\r\n');
  });
});

describe('console pages and cookies', () => {
  it('carry no inline script or style, and link only local assets', () => {
    for (const page of CONSOLE_PAGES) {
      const html = renderPage(page, { js: '/console/assets/console.js?v=1', css: '/console/assets/console.css?v=1', icon: '/console/assets/favicon.svg?v=1' });
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
      expect(html).not.toMatch(/\sstyle=|<style/);
      expect(html).not.toMatch(/https?:\/\//);
      expect(html).toContain('<main id="main"');
    }
  });
  it('given the contract\'s operations, then every page carries them for the script and the usage filter offers each, none kept by hand', () => {
    const html = (page: (typeof CONSOLE_PAGES)[number]) => renderPage(page, { js: '/console/assets/console.js?v=1', css: '/console/assets/console.css?v=1', icon: '/console/assets/favicon.svg?v=1' });
    for (const page of CONSOLE_PAGES) expect(html(page)).toContain(`data-operations="${Operation.options.join(' ')}"`);
    const options = [...html('usage').matchAll(/<option>([a-z_]+)<\/option>/g)].map((m) => m[1]);
    expect(options).toEqual(Operation.options);
    const browser = new URL('../../../services/console-web/browser/', import.meta.url);
    const sources = readdirSync(browser, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(sources).toContain('main.ts');
    for (const file of sources) {
      const script = readFileSync(new URL(file, browser), 'utf8');
      for (const op of Operation.options) expect(script, `${file}: ${op}`).not.toMatch(new RegExp(`['"\`]${op}['"\`]|\\b${op}:`));
    }
  });
  it('given the domain\'s password rule, then every new-password field asks for its minimum length', () => {
    for (const page of ['reset', 'accept', 'account'] as const) {
      const html = renderPage(page, { js: '/console/assets/console.js?v=1', css: '/console/assets/console.css?v=1', icon: '/console/assets/favicon.svg?v=1' });
      const fields = [...html.matchAll(/<input type="password"[^>]*autocomplete="new-password"[^>]*>/g)].map((m) => m[0]);
      expect(fields.length, page).toBeGreaterThan(0);
      for (const input of fields) expect(input).toContain(`minlength="${PASSWORD_MIN_CHARS}"`);
      expect(html).toContain(`at least ${PASSWORD_MIN_CHARS} characters`);
    }
  });
  it('reads one cookie among several', () => {
    expect(readCookie('a=1; lookup_console_session=abc; b=2', 'lookup_console_session')).toBe('abc');
    expect(readCookie('lookup_console_session_x=1', 'lookup_console_session')).toBeUndefined();
    expect(readCookie(undefined, 'x')).toBeUndefined();
  });
});
