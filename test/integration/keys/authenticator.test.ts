import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../../services/common/log';
import { KeyAuthenticator, type RevocationMarks } from '../../../services/keys/authenticator';
import { generateApiKey } from '../../../services/keys/key-material';
import { recordingSql, type RecordedStatement } from '../../support/recording-sql';
import { ledgerBackends, type OpenBackend } from '../ledger/backends';
import { hashApiKey } from '../../../services/keys/key-material';

/** Revocation marks kept in this process, expiring as the Redis ones do. */
function memoryMarks(): RevocationMarks & { failing: boolean; expiresAt(keyId: string): number | undefined } {
  const marks = new Map<string, number>();
  return {
    failing: false,
    expiresAt: (keyId) => marks.get(keyId),
    async mark(keyId, ttlMs) {
      if (this.failing) throw new Error('marks unreachable');
      marks.set(keyId, Date.now() + ttlMs);
    },
    async isMarked(keyId) {
      if (this.failing) throw new Error('marks unreachable');
      return (marks.get(keyId) ?? 0) > Date.now();
    },
  };
}

/** Keeps what is logged, to be read back. */
function keptLog(): Logger & { lines: { level: string; fields: object; message?: string }[] } {
  const lines: { level: string; fields: object; message?: string }[] = [];
  const at = (level: string) => (fields: object, message?: string) => void lines.push({ level, fields, message });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

/** Polls until `condition` holds (a notification arrives asynchronously). */
async function eventually(condition: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const keyReads = (queries: RecordedStatement[]) => queries.filter((q) => q.text.includes('FROM api_keys k JOIN workspaces')).length;

describe.each(ledgerBackends())('key authenticator on $name', (backendDef) => {
  let backend: OpenBackend;
  let queries: RecordedStatement[];
  let marks: ReturnType<typeof memoryMarks>;
  let log: ReturnType<typeof keptLog>;
  let authenticator: KeyAuthenticator;
  /** Another instance on the same database, told of revocations only by NOTIFY. */
  let other: KeyAuthenticator;

  beforeAll(async () => {
    backend = await backendDef.open();
    const recording = recordingSql(backend.sql);
    queries = recording.queries;
    marks = memoryMarks();
    log = keptLog();
    authenticator = new KeyAuthenticator(recording.sql, { marks, logger: log });
    other = new KeyAuthenticator(backend.sql);
    await authenticator.start();
    await other.start();
  });
  afterAll(async () => {
    await authenticator?.stop();
    await other?.stop();
    await backend?.cleanup();
  });

  async function newKey(maxConcurrency = 4) {
    const ws = await backend.workspaces.create({ name: 'Keys', maxConcurrency });
    const created = await backend.keys.create(ws.id, { rateLimitPerMinute: 90 });
    return { ws, ...created };
  }

  it('given a valid key, when it is checked twice, then the database is read once and the second answer comes from the cache', async () => {
    const { ws, id, key } = await newKey();
    const before = keyReads(queries);
    expect(authenticator.isCached(key)).toBe(false);
    const first = await authenticator.authenticate(key);
    expect(first).toEqual({ keyId: id, workspaceId: ws.id, rateLimitPerMinute: 90, maxConcurrency: 4, mode: 'live' });
    expect(authenticator.isCached(key)).toBe(true);
    expect(await authenticator.authenticate(key)).toEqual(first);
    expect(keyReads(queries) - before).toBe(1);
  });

  it('given a test key, when it is checked, then the answer says mode test; the same secret under the live prefix is no key', async () => {
    const ws = await backend.workspaces.create({ name: 'Test keys', maxConcurrency: 2 });
    const created = await backend.keys.create(ws.id, { mode: 'test' });
    expect(created.key).toMatch(/^lk_test_/);
    expect(await authenticator.authenticate(created.key)).toMatchObject({ keyId: created.id, mode: 'test' });
    // A row says test and the key says live: no key (the prefix is part of the hashed secret, so
    // this takes a row written by hand).
    const liveLooking = `lk_live_${created.key.slice('lk_test_'.length)}`;
    await backend.sql.query(
      "INSERT INTO api_keys (id, workspace_id, key_hash, prefix, name, rate_limit_per_minute, created_at, mode) VALUES ($1, $2, $3, 'x', NULL, 60, now(), 'test')",
      [`key_mismatch${created.id.slice(4)}`, ws.id, hashApiKey(liveLooking)],
    );
    expect(await authenticator.authenticate(liveLooking)).toBeNull();
  });

  it('given a key cached on another instance, when it is revoked here, then the other instance refuses it once the notification arrives', async () => {
    const { id, key } = await newKey();
    expect(await other.authenticate(key)).not.toBeNull();
    expect(other.isCached(key)).toBe(true);
    await backend.keys.revoke(id);
    await eventually(async () => !other.isCached(key), 'the revocation notification reaches the other instance');
    expect(await other.authenticate(key)).toBeNull();
  });

  it('given a cached key whose workspace limits change, when the notification arrives, then the new limit is read', async () => {
    const { ws, key } = await newKey(4);
    expect((await other.authenticate(key))?.maxConcurrency).toBe(4);
    await backend.workspaces.changeLimits(ws.id, 2);
    await eventually(async () => (await other.authenticate(key))?.maxConcurrency === 2, 'the limit change reaches the other instance');
  });

  it('given a revocation mark, when a cached valid key is checked, then the database decides (one read), and a revoked key is refused before any notification', async () => {
    const { id, key } = await newKey();
    await authenticator.authenticate(key);
    const before = keyReads(queries);
    await authenticator.authenticate(key);
    expect(keyReads(queries) - before).toBe(0);

    await marks.mark(id, 60_000);
    expect(await authenticator.authenticate(key)).not.toBeNull(); // marked but not revoked: still valid
    expect(keyReads(queries) - before).toBe(1);

    // Revoked in the database, and this instance told as the admin API tells it.
    await backend.keys.revoke(id);
    await authenticator.revoked(id);
    expect(authenticator.isCached(key)).toBe(false);
    expect(await authenticator.authenticate(key)).toBeNull();
  });

  it('given marks lost (Redis restarted empty, promoted, or renamed), when they are restored, then every key revoked within a mark lifetime is marked for what is left of it, and no older one', async () => {
    const recent = await newKey();
    const old = await newKey();
    const valid = await newKey();
    await backend.keys.revoke(recent.id);
    await backend.keys.revoke(old.id);
    // Revoked before any mark could still live (marks last twice the 60 s key cache).
    await backend.sql.query(`UPDATE api_keys SET revoked_at = now() - interval '121 seconds' WHERE id = $1`, [old.id]);
    expect(await marks.isMarked(recent.id)).toBe(false);

    const restoredAt = Date.now();
    expect(await authenticator.restoreMarks()).toBeGreaterThanOrEqual(1);
    expect(await marks.isMarked(recent.id)).toBe(true);
    const left = marks.expiresAt(recent.id)! - restoredAt;
    expect(left).toBeGreaterThan(100_000);
    expect(left).toBeLessThanOrEqual(120_000 + 50);
    expect(await marks.isMarked(old.id)).toBe(false);
    expect(await marks.isMarked(valid.id)).toBe(false);
    // Without marks there is nothing to restore.
    expect(await other.restoreMarks()).toBe(0);
  });

  it('given marks that cannot be read, when a cached valid key is checked, then the database decides and the failure is logged', async () => {
    const { key } = await newKey();
    await authenticator.authenticate(key);
    const before = keyReads(queries);
    marks.failing = true;
    try {
      expect(await authenticator.authenticate(key)).not.toBeNull();
    } finally {
      marks.failing = false;
    }
    expect(keyReads(queries) - before).toBe(1);
    expect(log.lines.some((l) => l.level === 'warn' && /revocation marks unreadable/.test(l.message ?? ''))).toBe(true);
  });

  const barriers = (statements: RecordedStatement[]) => statements.filter((q) => q.text.includes('pg_notify')).length;

  it('given made-up keys, when screened, then they are unlisted with no table read: one NOTIFY barrier, shared by every key screened meanwhile', async () => {
    const before = queries.length;
    expect(await authenticator.screen(generateApiKey())).toBe('unlisted');
    const flood = await Promise.all(Array.from({ length: 200 }, () => authenticator.screen(generateApiKey())));
    expect(flood.every((s) => s === 'unlisted')).toBe(true);
    const sent = queries.slice(before);
    expect(sent.length).toBe(barriers(sent));
    expect(barriers(sent)).toBe(2);
  });

  it('given a valid key, when screened, then it is listed from memory, no statement at all', async () => {
    const { key } = await newKey();
    await eventually(async () => (await authenticator.screen(key)) === 'listed', 'the key is listed');
    const before = queries.length;
    expect(await authenticator.screen(key)).toBe('listed');
    expect(queries.length).toBe(before);
  });

  it('given a key created through another instance a moment ago, when screened right after the creation commits, then it is listed, every time', async () => {
    const elsewhere = backend.another();
    const ws = await elsewhere.workspaces.create({ name: 'Elsewhere' });
    for (let i = 0; i < 20; i++) {
      const { id, key } = await elsewhere.keys.create(ws.id, {});
      expect(await authenticator.screen(key), `key ${i}`).toBe('listed');
      expect((await authenticator.authenticate(key))?.keyId).toBe(id);
    }
  });

  it('given a revoked key, when an instance starts, then its set leaves the key out and holds the valid ones', async () => {
    const revoked = await newKey();
    const valid = await newKey();
    await backend.keys.revoke(revoked.id);
    const recording = recordingSql(backend.sql);
    const starting = new KeyAuthenticator(recording.sql);
    await starting.start();
    try {
      const loaded = recording.queries.length;
      expect(await starting.screen(valid.key)).toBe('listed');
      expect(recording.queries.length).toBe(loaded);
      expect(await starting.screen(revoked.key)).toBe('unlisted');
      expect(keyReads(recording.queries)).toBe(0);
    } finally {
      await starting.stop();
    }
  });

  it('given an unknown key, when checked again within its short TTL, then the refusal comes from the cache; with no TTL, every check reads', async () => {
    const unknown = generateApiKey();
    const before = keyReads(queries);
    expect(await authenticator.authenticate(unknown)).toBeNull();
    expect(await authenticator.authenticate(unknown)).toBeNull();
    expect(keyReads(queries) - before).toBe(1);

    const recording = recordingSql(backend.sql);
    const uncached = new KeyAuthenticator(recording.sql, { unknownTtlMs: 0 });
    await uncached.start();
    try {
      await uncached.authenticate(unknown);
      await uncached.authenticate(unknown);
      expect(keyReads(recording.queries)).toBe(2);
    } finally {
      await uncached.stop();
    }
  });
});
