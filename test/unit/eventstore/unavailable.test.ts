import { describe, expect, it } from 'vitest';
import { DatabaseUnavailableError, isDatabaseUnreachable, isReadOnlyRefusal } from '../../../services/eventstore/unavailable';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnreachable', () => {
  it.each([
    ['connection refused', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['connection reset', withCode('ECONNRESET')],
    ['admin shutdown (pg_ctl stop -m fast)', withCode('57P01', 'terminating connection due to administrator command')],
    ['crash shutdown (-m immediate)', withCode('57P02')],
    ['cannot connect now (starting up, shutting down)', withCode('57P03', 'the database system is shutting down')],
    ['connection exception class 08', withCode('08006')],
    ['too many clients', withCode('53300')],
    ['connection lost mid-query', new Error('Connection terminated unexpectedly')],
    ['client broken by an earlier error', new Error('Client has encountered a connection error and is not queryable')],
    ['no pooled connection in time', new Error('timeout exceeded when trying to connect')],
    ['connect timeout', new Error('Connection terminated due to connection timeout')],
    ['a pool closed as its host was dropped', new Error('Cannot use a pool after calling end on the pool')],
    ['one failure per address', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], '')],
    ['already classified', new DatabaseUnavailableError(new Error('x'))],
  ])('given %s, then the database is unreachable', (_name, err) => {
    expect(isDatabaseUnreachable(err)).toBe(true);
  });

  it.each([
    ['a missing table', withCode('42P01', 'relation "x" does not exist')],
    ['a unique violation', withCode('23505')],
    ['a division by zero', withCode('22012')],
    ['a statement timeout', withCode('57014', 'canceling statement due to statement timeout')],
    ['a serialization failure', withCode('40001')],
    ['a plain error', new Error('projection refused')],
    ['not an error at all', 'ECONNREFUSED'],
  ])('given %s, then it is not an outage', (_name, err) => {
    expect(isDatabaseUnreachable(err)).toBe(false);
  });
});

describe('isReadOnlyRefusal', () => {
  it('given SQLSTATE 25006 (a write on a standby or a demoted primary), then the writable host is elsewhere', () => {
    expect(isReadOnlyRefusal(withCode('25006', 'cannot execute INSERT in a read-only transaction'))).toBe(true);
  });

  it.each([
    ['another SQLSTATE', withCode('23505')],
    ['a lost connection', withCode('ECONNRESET')],
    ['not an error', '25006'],
  ])('given %s, then it is no read-only refusal', (_name, err) => {
    expect(isReadOnlyRefusal(err)).toBe(false);
  });
});

describe('DatabaseUnavailableError', () => {
  it('keeps its cause and says whether a COMMIT was in flight', () => {
    const cause = withCode('57P01');
    const err = new DatabaseUnavailableError(cause, { commitOutcomeUnknown: true });
    expect(err.cause).toBe(cause);
    expect(err.commitOutcomeUnknown).toBe(true);
    expect(new DatabaseUnavailableError(cause).commitOutcomeUnknown).toBe(false);
  });
});
