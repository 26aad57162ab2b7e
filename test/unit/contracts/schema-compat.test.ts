import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventJsonSchemas } from '../../../contracts/jsonschema';
import {
  RELEASES_DIR,
  SCHEMA_DIR,
  compareVersions,
  lastRelease,
  readSchemaDir,
  schemaBreaks,
  schemaSetBreaks,
  type BreakKind,
} from '../../../contracts/schema-compat';

const FIXTURES = new URL('../../fixtures/schema-compat/', import.meta.url);
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Record<string, unknown>;
const baseline = fixture('baseline');

describe('event schemas against the last release', () => {
  it('a release is recorded, and today\'s schemas (committed and generated) break nothing of it', () => {
    const release = lastRelease();
    expect(release).not.toBeNull();
    const released = readSchemaDir(`${RELEASES_DIR}${release}/`);
    expect(Object.keys(released)).toContain('LookupCharged.json');
    expect(schemaSetBreaks(released, readSchemaDir(SCHEMA_DIR))).toEqual([]);
    expect(schemaSetBreaks(released, eventJsonSchemas())).toEqual([]);
  });

  it('the newest release is chosen by version number, not by name', () => {
    expect(['1.10.0', '1.9.2', '1.2.0'].sort(compareVersions)).toEqual(['1.2.0', '1.9.2', '1.10.0']);
  });
});

describe('the compatibility check on fixture schemas', () => {
  it('given the same schema, or one with a new optional field, a new enum value and a description, then nothing breaks', () => {
    expect(schemaBreaks(baseline, baseline)).toEqual([]);
    expect(schemaBreaks(baseline, fixture('compatible'))).toEqual([]);
  });

  const cases: [fixture: string, kind: BreakKind, path: string][] = [
    ['property_removed', 'property_removed', '/properties/data/properties/cause'],
    ['type_changed', 'type_changed', '/properties/data/properties/credits'],
    ['type_changed_nullable', 'type_changed', '/properties/data/properties/cause'],
    ['type_changed_items', 'type_changed', '/properties/data/properties/tags/items'],
    ['required_property_added', 'required_property_added', '/properties/data/properties/region'],
    ['property_now_optional', 'property_now_optional', '/properties/data/properties/credits'],
    ['value_removed', 'value_removed', '/properties/data/properties/operation'],
    ['value_removed_const', 'value_removed', '/properties/schema_version'],
    ['values_restricted', 'values_restricted', '/properties/data/properties/cause'],
    ['additional_properties_closed', 'additional_properties_closed', '/properties/metadata'],
  ];
  it.each(cases)('given the deliberately broken %s.json, then it reports %s at %s and nothing else', (name, kind, path) => {
    expect(schemaBreaks(baseline, fixture(name), `${name}.json`)).toEqual([{ file: `${name}.json`, path, kind, message: expect.any(String) }]);
  });

  it('given a broken schema among today\'s files, then the whole set fails; a schema gone fails too', () => {
    const released = readSchemaDir(`${RELEASES_DIR}${lastRelease()}/`);
    const today = { ...readSchemaDir(SCHEMA_DIR), 'LookupCharged.json': fixture('type_changed') };
    expect(schemaSetBreaks(released, today).length).toBeGreaterThan(0);
    const { 'LookupRefunded.json': _gone, ...withoutRefunds } = readSchemaDir(SCHEMA_DIR);
    expect(schemaSetBreaks(released, withoutRefunds)).toEqual([
      { file: 'LookupRefunded.json', path: '/', kind: 'schema_removed', message: expect.any(String) },
    ]);
  });
});
