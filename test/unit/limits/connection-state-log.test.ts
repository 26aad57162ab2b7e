import { describe, expect, it } from 'vitest';
import { ConnectionStateLog } from '../../../services/limits/redis-connection';

describe('ConnectionStateLog: one line when Redis is lost, one when it is back', () => {
  it('given a fresh connection, when it becomes ready, then it logs that it connected', () => {
    const log = new ConnectionStateLog();
    expect(log.ready(0)).toEqual({ level: 'info', message: 'Redis connected' });
  });

  it('given a ready connection, when it is lost and every reconnect attempt fails, then only the loss is logged', () => {
    const log = new ConnectionStateLog();
    log.ready(0);
    const lost = log.failed(undefined, 1_000);
    expect(lost).toMatchObject({ level: 'error', message: expect.stringContaining('Redis unavailable (connection lost)') });
    expect(log.failed(new Error('connect ECONNREFUSED 127.0.0.1:6379'), 1_050)).toBeUndefined();
    expect(log.failed(undefined, 1_100)).toBeUndefined();
    expect(log.failed(new Error('connect ECONNREFUSED 127.0.0.1:6379'), 1_200)).toBeUndefined();
  });

  it('given an outage, when the connection is ready again, then it logs how long it lasted and the failures it did not log', () => {
    const log = new ConnectionStateLog();
    log.ready(0);
    log.failed(undefined, 1_000);
    log.failed(new Error('connect ECONNREFUSED'), 1_050);
    log.failed(new Error('connect ECONNREFUSED'), 1_150);
    expect(log.ready(4_000)).toEqual({ level: 'info', message: 'Redis available again after 3000 ms (2 further failures not logged)' });
    expect(log.ready(4_001)).toBeUndefined();
  });

  it('given a recovered connection, when it is lost again, then the new outage is logged again with its error', () => {
    const log = new ConnectionStateLog();
    log.ready(0);
    log.failed(undefined, 10);
    log.ready(20);
    const err = new Error('read ECONNRESET');
    expect(log.failed(err, 30)).toEqual({
      level: 'error',
      message: 'Redis unavailable (read ECONNRESET): calls that need it answer 503 until it is back',
      err,
    });
  });

  it('given Redis out at start, when the first attempt fails, then that failure is logged', () => {
    const log = new ConnectionStateLog();
    expect(log.failed(new Error('connect ECONNREFUSED'), 0)).toMatchObject({ level: 'error' });
    expect(log.ready(500)).toMatchObject({ level: 'info', message: expect.stringMatching(/^Redis available again after 500 ms/) });
  });
});
