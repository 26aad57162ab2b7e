// Usage: npx tsx contracts/schema-compat.ts                   check today's schemas against the last release
//        npx tsx contracts/schema-compat.ts --release <x.y.z>  check, then record today's schemas as release x.y.z
// The JSON Schemas of the messages on Kafka (contracts/json-schema/*.json) against the ones of the
// last release (contracts/json-schema/releases/<version>/): a consumer written against a release
// must keep reading what the relay publishes, and today's schema must accept what the release
// published. Pure comparison first, file handling below.
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

type Schema = Record<string, unknown>;

export type BreakKind =
  | 'schema_removed'
  | 'property_removed'
  | 'property_now_optional'
  | 'required_property_added'
  | 'type_changed'
  | 'value_removed'
  | 'values_restricted'
  | 'additional_properties_closed';

export interface SchemaBreak {
  file: string;
  /** JSON-pointer-like path of the schema node (`/properties/data/properties/credits`). */
  path: string;
  kind: BreakKind;
  message: string;
}

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** anyOf / oneOf branches, or the schema itself. */
function branches(schema: Schema): Schema[] {
  const union = (schema.anyOf ?? schema.oneOf) as unknown;
  return Array.isArray(union) ? union.filter(isObject).flatMap(branches) : [schema];
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The JSON types a schema admits; empty when it says nothing about types (anything goes). */
function typesOf(schema: Schema): Set<string> {
  const types = new Set<string>();
  for (const branch of branches(schema)) {
    const declared = branch.type;
    if (typeof declared === 'string') types.add(declared);
    else if (Array.isArray(declared)) for (const t of declared) types.add(String(t));
    else if ('const' in branch) types.add(jsonType(branch.const));
    else if (Array.isArray(branch.enum)) for (const v of branch.enum) types.add(jsonType(v));
    else return new Set(); // one unconstrained branch: any type
  }
  return types;
}

/** The values a schema admits when it lists them (enum, const), else null: any value of its types. */
function valuesOf(schema: Schema): Set<string> | null {
  const values = new Set<string>();
  for (const branch of branches(schema)) {
    if ('const' in branch) values.add(JSON.stringify(branch.const));
    else if (Array.isArray(branch.enum)) for (const v of branch.enum) values.add(JSON.stringify(v));
    else if (branch.type === 'null') values.add('null');
    else return null;
  }
  return values;
}

/** The object-shaped branch of a schema (its only one, or the non-null one of a nullable object). */
function objectBranch(schema: Schema): Schema | undefined {
  return branches(schema).find((b) => b.type === 'object' || isObject(b.properties));
}

function itemsOf(schema: Schema): Schema | undefined {
  const branch = branches(schema).find((b) => b.type === 'array' || isObject(b.items));
  return branch && isObject(branch.items) ? branch.items : undefined;
}

const sameSet = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((x) => b.has(x));
const list = (s: Iterable<string>) => [...s].sort().join(', ');

/**
 * What in `current` breaks a consumer of `baseline` or rejects a message `baseline` allowed:
 * a property removed or no longer required, a new required property, a changed type, an allowed
 * value removed (enum or const) or a free value restricted to a list, `additionalProperties`
 * newly false. New optional properties, new enum values and new descriptions are compatible.
 */
export function schemaBreaks(baseline: Schema, current: Schema, file = '', path = ''): SchemaBreak[] {
  const found: SchemaBreak[] = [];
  const add = (kind: BreakKind, where: string, message: string) => found.push({ file, path: where || '/', kind, message });

  const [oldTypes, newTypes] = [typesOf(baseline), typesOf(current)];
  if ((oldTypes.size > 0 || newTypes.size > 0) && !sameSet(oldTypes, newTypes)) {
    add('type_changed', path, `type ${list(oldTypes) || 'any'} became ${list(newTypes) || 'any'}`);
  }
  const [oldValues, newValues] = [valuesOf(baseline), valuesOf(current)];
  if (newValues !== null) {
    if (oldValues === null) add('values_restricted', path, `any value became one of ${list(newValues)}`);
    else for (const value of oldValues) if (!newValues.has(value)) add('value_removed', path, `value ${value} no longer allowed`);
  }

  const [oldObject, newObject] = [objectBranch(baseline), objectBranch(current)];
  if (oldObject && newObject) {
    const oldProps = isObject(oldObject.properties) ? oldObject.properties : {};
    const newProps = isObject(newObject.properties) ? newObject.properties : {};
    const oldRequired = new Set(Array.isArray(oldObject.required) ? oldObject.required.map(String) : []);
    const newRequired = new Set(Array.isArray(newObject.required) ? newObject.required.map(String) : []);
    for (const [name, oldProp] of Object.entries(oldProps)) {
      const where = `${path}/properties/${name}`;
      const newProp = newProps[name];
      if (!isObject(newProp)) {
        add('property_removed', where, `property ${name} removed`);
        continue;
      }
      if (oldRequired.has(name) && !newRequired.has(name)) add('property_now_optional', where, `property ${name} is no longer required`);
      if (isObject(oldProp)) found.push(...schemaBreaks(oldProp, newProp, file, where));
    }
    for (const name of newRequired) {
      if (!oldRequired.has(name)) add('required_property_added', `${path}/properties/${name}`, `property ${name} is newly required`);
    }
    if (oldObject.additionalProperties !== false && newObject.additionalProperties === false) {
      add('additional_properties_closed', path, 'additionalProperties became false');
    }
    if (isObject(oldObject.additionalProperties) && isObject(newObject.additionalProperties)) {
      found.push(...schemaBreaks(oldObject.additionalProperties, newObject.additionalProperties, file, `${path}/additionalProperties`));
    }
  }
  const [oldItems, newItems] = [itemsOf(baseline), itemsOf(current)];
  if (oldItems && newItems) found.push(...schemaBreaks(oldItems, newItems, file, `${path}/items`));
  return found;
}

/** Every file of the baseline against the file of the same name today (a file gone is a break). */
export function schemaSetBreaks(baseline: Record<string, Schema>, current: Record<string, Schema>): SchemaBreak[] {
  const found: SchemaBreak[] = [];
  for (const [file, schema] of Object.entries(baseline).sort(([a], [b]) => a.localeCompare(b))) {
    const now = current[file];
    if (!now) found.push({ file, path: '/', kind: 'schema_removed', message: `${file} is no longer published` });
    else found.push(...schemaBreaks(schema, now, file));
  }
  return found;
}

export const SCHEMA_DIR = fileURLToPath(new URL('./json-schema/', import.meta.url));
export const RELEASES_DIR = `${SCHEMA_DIR}releases/`;

export function readSchemaDir(dir: string): Record<string, Schema> {
  const schemas: Record<string, Schema> = {};
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    schemas[name] = JSON.parse(readFileSync(`${dir}${dir.endsWith('/') ? '' : '/'}${name}`, 'utf8')) as Schema;
  }
  return schemas;
}

const isVersion = (v: string) => /^\d+\.\d+\.\d+$/.test(v);

export function compareVersions(a: string, b: string): number {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
}

/** The newest release recorded under releases/ (by version number), or null if none. */
export function lastRelease(dir = RELEASES_DIR): string | null {
  if (!existsSync(dir)) return null;
  return readdirSync(dir).filter(isVersion).sort(compareVersions).at(-1) ?? null;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const release = lastRelease();
  if (!release) {
    console.error(`no release under ${RELEASES_DIR}`);
    process.exit(1);
  }
  const breaks = schemaSetBreaks(readSchemaDir(`${RELEASES_DIR}${release}/`), readSchemaDir(SCHEMA_DIR));
  for (const b of breaks) console.error(`${b.file} ${b.path}: ${b.kind}: ${b.message}`);
  if (breaks.length > 0) {
    console.error(`${breaks.length} backward-incompatible change(s) since release ${release}`);
    process.exit(1);
  }
  console.log(`contracts/json-schema is compatible with release ${release}`);
  const flag = process.argv.indexOf('--release');
  if (flag > 0) {
    const version = process.argv[flag + 1] ?? '';
    if (!isVersion(version) || compareVersions(version, release) <= 0) {
      console.error(`--release needs a version x.y.z newer than ${release}`);
      process.exit(1);
    }
    const target = `${RELEASES_DIR}${version}/`;
    mkdirSync(target, { recursive: true });
    for (const name of Object.keys(readSchemaDir(SCHEMA_DIR))) copyFileSync(`${SCHEMA_DIR}${name}`, `${target}${name}`);
    console.log(`recorded contracts/json-schema as release ${version}`);
  }
}
