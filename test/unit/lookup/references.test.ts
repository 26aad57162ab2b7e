import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseCompanyReference, parseDomain, parsePersonReference } from '../../../services/lookup/references';
import { nearly } from '../../support/unicode-arbitraries';

const slug = (s: string) => ({ ok: true, ref: { kind: 'slug', slug: s } });
const id = (i: string) => ({ ok: true, ref: { kind: 'id', id: i } });
const fail = { ok: false };

describe('parseCompanyReference', () => {
  describe('accepts company page URLs in every variant', () => {
    it.each([
      'https://www.linkedin.com/company/acme-robotics',
      'https://www.linkedin.com/company/acme-robotics/',
      'http://www.linkedin.com/company/acme-robotics',
      'www.linkedin.com/company/acme-robotics',
      'linkedin.com/company/acme-robotics',
      'https://linkedin.com/company/acme-robotics/',
      'https://m.linkedin.com/company/acme-robotics',
      'https://uk.linkedin.com/company/acme-robotics',
      'https://de.linkedin.com/company/acme-robotics/about/',
      'https://www.linkedin.com/company/acme-robotics/jobs',
      'https://www.linkedin.com/company/acme-robotics/?originalSubdomain=uk',
      'https://www.linkedin.com/company/acme-robotics#people',
      'https://www.linkedin.com/company/acme-robotics/posts/?feedView=all#top',
      'HTTPS://WWW.LINKEDIN.COM/COMPANY/ACME-ROBOTICS/',
      'Https://Www.LinkedIn.com/Company/Acme-Robotics',
      'https://www.linkedin.com/company/acme%2Drobotics',
      '  https://www.linkedin.com/company/acme-robotics  ',
    ])('%s', (input) => {
      expect(parseCompanyReference(input)).toEqual(slug('acme-robotics'));
    });
  });

  it('lowercases slugs and keeps dots and underscores', () => {
    expect(parseCompanyReference('Acme_Robotics.Inc')).toEqual(slug('acme_robotics.inc'));
  });

  it('accepts an old slug like any slug (resolution happens later)', () => {
    expect(parseCompanyReference('acme-robotics-inc')).toEqual(slug('acme-robotics-inc'));
  });

  it('decodes %-escapes into non-ASCII letters', () => {
    expect(parseCompanyReference('https://www.linkedin.com/company/soci%C3%A9t%C3%A9-g%C3%A9n%C3%A9rale')).toEqual(
      slug('société-générale'),
    );
  });

  describe('numeric ids and URNs', () => {
    it.each([
      ['1337', '1337'],
      ['https://www.linkedin.com/company/1337/', '1337'],
      ['linkedin.com/company/1337/about', '1337'],
      ['/company/1337', '1337'],
      ['/company/1337/', '1337'],
      ['urn:li:company:1337', '1337'],
      ['urn:li:organization:1337', '1337'],
      ['urn:li:fsd_company:1337', '1337'],
      ['URN:LI:Company:1337', '1337'],
      ['0001337', '1337'],
      ['9999999999999999999', '9999999999999999999'],
    ])('%s -> id %s', (input, expected) => {
      expect(parseCompanyReference(input)).toEqual(id(expected));
    });
  });

  describe('rejects everything that is not a company reference', () => {
    it.each([
      '',
      '   ',
      'https://www.linkedin.com/in/jane-doe-42',
      'https://www.linkedin.com/school/stanford-university/',
      'https://www.linkedin.com/showcase/acme-labs/',
      'https://www.linkedin.com/jobs/view/123',
      'https://www.linkedin.com/feed/',
      'https://www.linkedin.com/company/',
      'https://www.linkedin.com/company',
      'https://www.linkedin.com/',
      'linkedin.com',
      'www.linkedin.com',
      'https://www.linkedin.com/company/acme/about/team',
      'https://www.linkedin.com/company/acme//',
      'https://www.linkedin.com/company/acme robotics',
      'https://www.linkedin.com/company/acme%20robotics',
      'https://www.linkedin.com/company/acme%2Frobotics',
      'https://www.linkedin.com/company/%E0%A4%A',
      'https://www.example.com/company/acme-robotics',
      'https://linkedin.com.evil.com/company/acme-robotics',
      'https://notlinkedin.com/company/acme-robotics',
      'ftp://www.linkedin.com/company/acme-robotics',
      'https://user@www.linkedin.com/company/acme-robotics',
      'https://www.linkedin.com:8443/company/acme-robotics',
      'Acme Robotics',
      'acme robotics inc',
      'who makes robots?',
      'acme!',
      'acme@robotics',
      '---',
      '123-456',
      '12345678901234567890',
      'urn:li:company:',
      'urn:li:company:abc',
      'urn:li:member:1337',
      'urn:li:school:1337',
      'a'.repeat(101),
    ])('%j', (input) => {
      expect(parseCompanyReference(input)).toEqual(fail);
    });
  });

  it('accepts a slug of exactly 100 characters', () => {
    expect(parseCompanyReference('a'.repeat(100))).toEqual(slug('a'.repeat(100)));
  });

  describe('properties', () => {
    const slugChar = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-_.'.split(''));
    const validSlug = fc
      .array(slugChar, { minLength: 1, maxLength: 100 })
      .map((chars) => chars.join(''))
      .filter((s) => /[a-z]/.test(s));
    const randomCase = (s: string, mask: boolean[]) =>
      [...s].map((ch, i) => (mask[i % mask.length] ? ch.toUpperCase() : ch)).join('');
    const urlVariant = fc.record({
      scheme: fc.constantFrom('', 'http://', 'https://'),
      host: fc.constantFrom('linkedin.com', 'www.linkedin.com', 'm.linkedin.com', 'uk.linkedin.com', 'de.linkedin.com'),
      subpage: fc.constantFrom('', '/about', '/jobs', '/people', '/posts'),
      trailingSlash: fc.boolean(),
      query: fc.constantFrom('', '?trk=public_profile', '?a=1&b=2'),
      fragment: fc.constantFrom('', '#about'),
      mask: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
    });

    it('every valid slug parses back to itself, bare and in every URL variant and case', () => {
      fc.assert(
        fc.property(validSlug, urlVariant, (s, v) => {
          const url = `${v.scheme}${v.host}/company/${s}${v.subpage}${v.trailingSlash ? '/' : ''}${v.query}${v.fragment}`;
          expect(parseCompanyReference(randomCase(url, v.mask))).toEqual(slug(s));
          expect(parseCompanyReference(randomCase(s, v.mask))).toEqual(slug(s));
        }),
      );
    });

    it('every numeric id of 1-19 digits parses as an id, in every form', () => {
      fc.assert(
        fc.property(fc.bigInt({ min: 1n, max: 9_999_999_999_999_999_999n }), urlVariant, (n, v) => {
          const digits = n.toString();
          for (const input of [
            digits,
            `urn:li:company:${digits}`,
            `urn:li:organization:${digits}`,
            `urn:li:fsd_company:${digits}`,
            `${v.scheme}${v.host}/company/${digits}${v.subpage}${v.trailingSlash ? '/' : ''}${v.query}`,
          ]) {
            expect(parseCompanyReference(input)).toEqual(id(digits));
          }
        }),
      );
    });

    it('free text with an inner space never parses as a company', () => {
      const word = fc.string({ minLength: 1, maxLength: 20 }).filter((w) => w.trim() !== '');
      fc.assert(
        fc.property(word, word, (a, b) => {
          expect(parseCompanyReference(`${a.trim()} ${b.trim()}`)).toEqual(fail);
        }),
      );
    });

    it('a person profile URL never parses as a company', () => {
      fc.assert(
        fc.property(validSlug, urlVariant, (s, v) => {
          expect(parseCompanyReference(`${v.scheme}${v.host}/in/${s}`)).toEqual(fail);
        }),
      );
    });

    it('never throws on arbitrary input', () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 300 }), (input) => {
          const result = parseCompanyReference(input);
          expect(typeof result.ok).toBe('boolean');
        }),
      );
    });
  });
});

describe('parseDomain', () => {
  describe('reduces a host or URL to its registrable domain', () => {
    it.each([
      ['acmerobotics.com', 'acmerobotics.com'],
      ['www.acmerobotics.com', 'acmerobotics.com'],
      ['https://www.acmerobotics.com', 'acmerobotics.com'],
      ['https://www.acmerobotics.com/', 'acmerobotics.com'],
      ['http://shop.acmerobotics.com/products/robot-1?x=1#top', 'acmerobotics.com'],
      ['HTTPS://WWW.ACMEROBOTICS.COM/About', 'acmerobotics.com'],
      ['shop.acme.co.uk', 'acme.co.uk'],
      ['acme.co.uk', 'acme.co.uk'],
      ['a.b.c.acme.com.au', 'acme.com.au'],
      ['acme.com:8080', 'acme.com'],
      ['https://acme.com.:443/', 'acme.com'],
      ['globex.com', 'globex.com'],
      ['www.globex-corp.com', 'globex-corp.com'],
      ['no-company-here.com', 'no-company-here.com'],
      ['sandbox-timeout.com', 'sandbox-timeout.com'],
      ['münchen.de', 'xn--mnchen-3ya.de'],
      ['  acme.io  ', 'acme.io'],
      // the private section of the list is ignored: github.io is an ICANN .io name
      ['someone.github.io', 'github.io'],
    ])('%s -> %s', (input, expected) => {
      expect(parseDomain(input)).toEqual({ ok: true, domain: expected });
    });
  });

  describe('rejects what is not a website on a public domain', () => {
    it.each([
      '',
      '   ',
      '127.0.0.1',
      'http://127.0.0.1/',
      '10.0.0.1:8080',
      '0x7f.1',
      '[::1]',
      'http://[2001:db8::1]/',
      'localhost',
      'http://localhost:3000',
      'acme-robotics',
      'acme',
      'foo.test',
      'www.foo.test',
      'acme.example',
      'acme.invalid',
      'acme.localhost',
      'printer.local',
      'acme.notarealtld',
      'acme.internal',
      'co.uk',
      'com',
      'jane@acme.com',
      'mailto:jane@acme.com',
      'https://user:pass@acme.com/',
      'linkedin.com',
      'www.linkedin.com',
      'uk.linkedin.com',
      'https://www.linkedin.com/company/acme-robotics',
      'linkedin.com/company/acme-robotics',
      'ftp://acme.com',
      'acme .com',
      'ac_me.com',
      '-acme.com',
      'acme-.com',
      'https://',
      '/acme.com',
      '?acme.com',
    ])('%j', (input) => {
      expect(parseDomain(input)).toEqual({ ok: false });
    });
  });

  describe('properties', () => {
    const label = fc
      .array(fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'.split('')), { minLength: 1, maxLength: 20 })
      .map((c) => c.join(''));
    const suffix = fc.constantFrom('com', 'org', 'net', 'io', 'de', 'co.uk', 'com.au', 'co.jp', 'fr');

    it('any subdomain and any page of a registrable domain reduces to it', () => {
      fc.assert(
        fc.property(
          label,
          suffix,
          fc.array(label, { maxLength: 4 }),
          fc.constantFrom('', 'http://', 'https://'),
          fc.constantFrom('', '/', '/about', '/a/b?c=d#e'),
          fc.boolean(),
          (name, sfx, subs, scheme, path, upper) => {
            const domain = `${name}.${sfx}`;
            const host = [...subs, domain].join('.');
            const input = `${scheme}${host}${path}`;
            expect(parseDomain(upper ? input.toUpperCase() : input)).toEqual({ ok: true, domain });
          },
        ),
      );
    });

    it('an IPv4 address is never a domain', () => {
      fc.assert(
        fc.property(fc.ipV4(), (ip) => {
          expect(parseDomain(ip)).toEqual({ ok: false });
          expect(parseDomain(`https://${ip}/`)).toEqual({ ok: false });
        }),
      );
    });

    it('never throws on arbitrary input', () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 300 }), (input) => {
          expect(typeof parseDomain(input).ok).toBe('boolean');
        }),
      );
    });
  });
});

describe('parsePersonReference', () => {
  const url = (publicIdentifier: string) => ({ ok: true, ref: { kind: 'url', publicIdentifier } });
  const name = (n: string, normalizedName: string) => ({ ok: true, ref: { kind: 'name', name: n, normalizedName } });

  describe('accepts /in/ profile URLs', () => {
    it.each([
      'https://www.linkedin.com/in/jane-doe-42',
      'https://www.linkedin.com/in/jane-doe-42/',
      'http://linkedin.com/in/jane-doe-42',
      'linkedin.com/in/jane-doe-42',
      'www.linkedin.com/in/jane-doe-42/',
      'https://m.linkedin.com/in/jane-doe-42',
      'https://fr.linkedin.com/in/jane-doe-42/',
      'https://www.linkedin.com/in/jane-doe-42/details',
      'https://www.linkedin.com/in/jane-doe-42/recent-activity/',
      'https://www.linkedin.com/in/jane-doe-42?trk=people-guest#experience',
      'HTTPS://WWW.LINKEDIN.COM/IN/JANE-DOE-42',
      'https://www.linkedin.com/in/jane%2Ddoe%2D42',
    ])('%s', (input) => {
      expect(parsePersonReference(input)).toEqual(url('jane-doe-42'));
    });

    it('decodes %-escaped non-ASCII identifiers', () => {
      expect(parsePersonReference('https://www.linkedin.com/in/jos%C3%A9-garc%C3%ADa')).toEqual(url('josé-garcía'));
    });
  });

  describe('accepts names', () => {
    it.each([
      ['Jane Doe', 'Jane Doe', 'jane doe'],
      ['  Jane   Doe  ', 'Jane Doe', 'jane doe'],
      ["Conan O'Brien", "Conan O'Brien", "conan o'brien"],
      ['Jean-Luc Picard', 'Jean-Luc Picard', 'jean-luc picard'],
      ['J. R. R. Tolkien', 'J. R. R. Tolkien', 'j. r. r. tolkien'],
      ['José García', 'José García', 'josé garcía'],
      ['Zoë', 'Zoë', 'zoë'],
      ['李小龍', '李小龍', '李小龍'],
      ['Владимир Набоков', 'Владимир Набоков', 'владимир набоков'],
      ['x', 'x', 'x'],
    ])('%j', (input, n, normalized) => {
      expect(parsePersonReference(input)).toEqual(name(n, normalized));
    });

    it('composes decomposed accents so both spellings are one name', () => {
      const decomposed = 'Jose\u0301';
      const result = parsePersonReference(decomposed);
      expect(result).toEqual(name('José', 'josé'));
    });

    it('accepts a name of 100 characters and refuses one of 101', () => {
      expect(parsePersonReference('a'.repeat(100)).ok).toBe(true);
      expect(parsePersonReference('a'.repeat(101))).toEqual(fail);
    });
  });

  describe('rejects member ids, other pages and anything else', () => {
    it.each([
      '',
      '   ',
      'ACoAABcdEfGhIjKlMnOp',
      'ACoAAxyz',
      'https://www.linkedin.com/in/ACoAABcdEfGhIjKlMnOp',
      'https://www.linkedin.com/in/acoaabcdefghijklmnop/',
      'https://www.linkedin.com/company/acme-robotics',
      'https://www.linkedin.com/school/stanford/',
      'https://www.linkedin.com/pub/jane-doe/1/2/3',
      'https://www.linkedin.com/in/',
      'https://www.linkedin.com/in',
      'https://www.linkedin.com/in/jane-doe-42/details/experience',
      'https://www.linkedin.com/',
      'linkedin.com',
      'www.linkedin.com',
      'https://www.example.com/in/jane-doe-42',
      'https://twitter.com/janedoe',
      'ftp://www.linkedin.com/in/jane-doe-42',
      'https://www.linkedin.com/in/jane doe',
      'https://www.linkedin.com/in/---',
      'jane-doe-42',
      'Jane Doe 42',
      'jane.doe@example.com',
      'Jane_Doe',
      '---',
      "'.-",
      'Jane\tDoe',
      'Jane\nDoe',
      'Jane & John',
      'a'.repeat(101),
    ])('%j', (input) => {
      expect(parsePersonReference(input)).toEqual(fail);
    });
  });

  describe('properties', () => {
    const idChar = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-'.split(''));
    const publicId = fc
      .array(idChar, { minLength: 1, maxLength: 100 })
      .map((c) => c.join(''))
      .filter((s) => /[a-z0-9]/.test(s) && !s.startsWith('acoaa'));

    it('every public identifier parses back to itself in every URL variant and case', () => {
      fc.assert(
        fc.property(
          publicId,
          fc.constantFrom('', 'http://', 'https://'),
          fc.constantFrom('linkedin.com', 'www.linkedin.com', 'm.linkedin.com', 'br.linkedin.com'),
          fc.constantFrom('', '/', '/details', '/recent-activity/'),
          fc.constantFrom('', '?trk=x', '#about'),
          fc.boolean(),
          (pid, scheme, host, tail, query, upper) => {
            const input = `${scheme}${host}/in/${pid}${tail}${query}`;
            expect(parsePersonReference(upper ? input.toUpperCase() : input)).toEqual(url(pid));
          },
        ),
      );
    });

    it('a member id is refused as the value and as the /in/ id', () => {
      const tail = fc.array(fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'.split('')), {
        minLength: 0,
        maxLength: 40,
      });
      fc.assert(
        fc.property(tail, (chars) => {
          const memberId = `ACoAA${chars.join('')}`;
          expect(parsePersonReference(memberId)).toEqual(fail);
          expect(parsePersonReference(`https://www.linkedin.com/in/${memberId}`)).toEqual(fail);
        }),
      );
    });

    it('normalizedName is the trimmed, space-collapsed, lowercased name, and is stable', () => {
      const nameChar = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéÉ -\'.'.split(''));
      const rawName = fc
        .array(nameChar, { minLength: 1, maxLength: 100 })
        .map((c) => c.join(''))
        .filter((s) => /[a-zA-ZéÉ]/.test(s) && !s.trim().startsWith('ACoAA'));
      fc.assert(
        fc.property(rawName, (raw) => {
          const result = parsePersonReference(raw);
          expect(result.ok).toBe(true);
          if (!result.ok || result.ref.kind !== 'name') return;
          const expected = raw.trim().replace(/ +/g, ' ').toLowerCase();
          expect(result.ref.normalizedName).toBe(expected);
          const again = parsePersonReference(result.ref.normalizedName);
          expect(again.ok && again.ref.kind === 'name' && again.ref.normalizedName).toBe(expected);
        }),
      );
    });

    it('never throws on arbitrary input', () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 300 }), (input) => {
          expect(typeof parsePersonReference(input).ok).toBe('boolean');
        }),
      );
    });
  });
});

describe('characters no reference holds', () => {
  // Controls (URL parsers drop tabs and newlines and trim C0), invisible characters (IDNA drops
  // zero-width space, soft hyphen, variation selectors...) and the backslash (read as `/`) would
  // make another string resolve to the same site or page unseen: each is refused, raw or %-escaped.
  const unseen = [
    ['U+0000', '\u0000'],
    ['U+0001', '\u0001'],
    ['a tab', '\t'],
    ['a newline', '\n'],
    ['DEL', '\u007F'],
    ['a C1 control', '\u0085'],
    ['a zero-width space', '\u200B'],
    ['a zero-width joiner', '\u200D'],
    ['a right-to-left override', '\u202E'],
    ['a soft hyphen', '\u00AD'],
    ['a byte-order mark', '\uFEFF'],
    ['a variation selector', '\uFE0F'],
    ['a word joiner', '\u2060'],
    ['a backslash', '\\'],
    ['a lone surrogate', '\uD800'],
  ] as const;

  describe.each(unseen)('%s', (_, c) => {
    it.each([
      ['at the end', `acmerobotics.com${c}`],
      ['at the start', `${c}acmerobotics.com`],
      ['inside', `acme${c}robotics.com`],
      ['after the host of a URL', `https://acmerobotics.com${c}/about`],
    ])('refuses a domain with it %s', (_where, input) => {
      expect(parseDomain(input)).toEqual(fail);
    });

    it('refuses a company slug, page URL and person URL or name holding it', () => {
      expect(parseCompanyReference(`acme-robotics${c}`)).toEqual(fail);
      expect(parseCompanyReference(`https://www.linkedin.com/company/acme${c}robotics`)).toEqual(fail);
      expect(parseCompanyReference(`https://www.linkedin.com/company/acme-robotics/?q=${c}`)).toEqual(fail);
      expect(parsePersonReference(`https://www.linkedin.com/in/jane-doe-42${c}`)).toEqual(fail);
      expect(parsePersonReference(`Jane${c} Doe`)).toEqual(fail);
    });
  });

  it.each(['%E2%80%8B', '%C2%AD', '%EF%B8%8F', '%00', '%5C', '%0A'])('refuses %s %-escaped in a host, a slug and a profile id', (escaped) => {
    expect(parseDomain(`acme${escaped}robotics.com`)).toEqual(fail);
    expect(parseCompanyReference(`acme${escaped}robotics`)).toEqual(fail);
    expect(parseCompanyReference(`https://www.linkedin.com/company/acme${escaped}robotics`)).toEqual(fail);
    expect(parsePersonReference(`https://www.linkedin.com/in/jane${escaped}doe`)).toEqual(fail);
  });

  it('still trims ordinary spaces and still accepts letters with combining marks and IDN hosts', () => {
    expect(parseDomain('  acmerobotics.com  ')).toEqual({ ok: true, domain: 'acmerobotics.com' });
    expect(parseDomain('münchen.de')).toEqual({ ok: true, domain: 'xn--mnchen-3ya.de' });
    expect(parseCompanyReference('soci%C3%A9t%C3%A9')).toEqual(slug('société'));
    expect(parsePersonReference('Jose\u0301').ok).toBe(true);
  });

  it('given a valid domain with anything inserted anywhere, then what holds an unseen character is refused', () => {
    fc.assert(
      fc.property(nearly(['acmerobotics.com', 'https://www.acmerobotics.com/', 'shop.acme.co.uk']), (input) => {
        const result = parseDomain(input);
        if (/[\p{Cc}\p{Cf}\p{Cs}\p{Default_Ignorable_Code_Point}\\]/u.test(input)) expect(result).toEqual(fail);
        if (result.ok) expect(result.domain).toMatch(/^[a-z0-9.-]+$/);
      }),
      { numRuns: 500 },
    );
  });
});
