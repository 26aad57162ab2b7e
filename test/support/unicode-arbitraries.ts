// Strings that go where well-behaved clients do not: any code point, unpaired surrogate halves
// (fast-check's 'binary' unit never yields one on its own), U+0000 and other controls, invisible
// characters, and the separators URL parsers care about.
import fc from 'fast-check';

/** Characters that have broken or fooled a layer of this service before. */
export const TROUBLE_CHARACTERS = [
  '\u0000', '\u0001', '\t', '\n', '\r', '\u001F', '\u007F', '\u0085', '\u00A0', '\u00AD',
  '\u200B', '\u200D', '\u202E', '\u2028', '\uFE0F', '\uFEFF', '\uFFFD', '\\', '%', '/', '.', ' ', '@', '#', '?',
];

export const anyCharacter = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)) },
  { weight: 2, arbitrary: fc.constantFrom(...TROUBLE_CHARACTERS) },
);

/** Any JavaScript string, lone surrogates and controls included. */
export const anyString = (maxLength = 30) => fc.string({ unit: anyCharacter, maxLength });

/** A value that is nearly right: a valid one with trouble before, inside or after it. */
export const nearly = (valid: readonly string[], maxLength = 6) =>
  fc
    .tuple(fc.constantFrom(...valid), anyString(maxLength), fc.nat(), fc.constantFrom('before', 'inside', 'after'))
    .map(([value, extra, at, where]) => {
      if (where === 'before') return extra + value;
      if (where === 'after') return value + extra;
      const i = at % (value.length + 1);
      return value.slice(0, i) + extra + value.slice(i);
    });
