import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { renderJsonSchemaFiles, staleJsonSchemaFiles } from '../../../contracts/export-json-schema';
import { eventJsonSchemas } from '../../../contracts/jsonschema';
import { toBalanceMessage } from '../../../services/relay/balances-topic';
import { toOutgoingMessage, topicNames } from '../../../services/relay/routing';
import { ALL_EVENT_TYPES, recorded } from './samples';

// Strict mode: a keyword or format a consumer's validator would not know fails here first.
const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
const schemas = eventJsonSchemas();
const validators = Object.fromEntries(Object.entries(schemas).map(([file, schema]) => [file, ajv.compile(schema)]));
const outgoingValue = (type: (typeof ALL_EVENT_TYPES)[number]) => JSON.parse(toOutgoingMessage(recorded(type), topicNames()).value);

describe('JSON Schemas of the published events', () => {
  it('exist for every event type, plus the envelope and the balances topic', () => {
    expect(Object.keys(schemas).sort()).toEqual([...ALL_EVENT_TYPES.map((t) => `${t}.json`), 'envelope.json', 'WorkspaceBalance.json'].sort());
  });

  it('accept the balance message the relay publishes, and reject one without a balance', () => {
    const value = JSON.parse(toBalanceMessage('ws_01JTESTWORKSPACE0000000000', 42, recorded('CreditsGranted', 2), topicNames()).value);
    expect(validators['WorkspaceBalance.json']!(value), ajv.errorsText(validators['WorkspaceBalance.json']!.errors)).toBe(true);
    const { balance: _dropped, ...withoutBalance } = value;
    expect(validators['WorkspaceBalance.json']!(withoutBalance)).toBe(false);
  });

  it.each(ALL_EVENT_TYPES)('accept the message the relay publishes for %s, and the envelope accepts it too', (type) => {
    const value = outgoingValue(type);
    expect(validators[`${type}.json`]!(value), ajv.errorsText(validators[`${type}.json`]!.errors)).toBe(true);
    expect(validators['envelope.json']!(value)).toBe(true);
  });

  it('reject a message of another type, a wrong data field, and a missing event id', () => {
    const charged = outgoingValue('LookupCharged');
    expect(validators['LookupRefunded.json']!(charged)).toBe(false);
    expect(validators['LookupCharged.json']!({ ...charged, data: { ...charged.data, credits: -1 } })).toBe(false);
    const { event_id: _dropped, ...withoutId } = charged;
    expect(validators['envelope.json']!(withoutId)).toBe(false);
  });

  it('describe ApiKeyCreated without key_hash: a message carrying one is rejected', () => {
    const created = outgoingValue('ApiKeyCreated');
    expect(validators['ApiKeyCreated.json']!(created)).toBe(true);
    expect(validators['ApiKeyCreated.json']!({ ...created, data: { ...created.data, key_hash: 'a'.repeat(64) } })).toBe(false);
  });

  it('are committed up to date in contracts/json-schema (else run: npx tsx contracts/export-json-schema.ts)', () => {
    expect(staleJsonSchemaFiles()).toEqual([]);
    expect(Object.keys(renderJsonSchemaFiles())).toContain('envelope.json');
  });
});
