// The Mailer port's one contract, run against both adapters: what `send` resolved for arrives,
// whole, addressed and identified as sent; what it could not hand over rejects.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFolderMailer } from '../../../services/email/folder-mailer';
import { messageIdOf, type Mailer } from '../../../services/email/mailer';
import { createSmtpMailer } from '../../../services/email/smtp-mailer';
import { startTestSmtpServer, type TestSmtpServer } from '../../support/smtp-server';

interface Harness {
  mailer: Mailer;
  /** The messages handed over so far, parsed. */
  delivered(): Promise<ParsedMail[]>;
  /** A mailer of the same kind that cannot hand anything over. */
  broken(): Promise<Mailer>;
  close(): Promise<void>;
}

const FROM = 'Lookup console <no-reply@lookup.test>';
const silent = { info() {}, warn() {}, error() {} };

const adapters: Record<string, () => Promise<Harness>> = {
  smtp: async () => {
    const server: TestSmtpServer = await startTestSmtpServer();
    const mailer = createSmtpMailer(server.url);
    return {
      mailer,
      delivered: async () => server.received,
      broken: async () => {
        server.refuseNext(1);
        return mailer;
      },
      close: async () => {
        await mailer.close();
        await server.close();
      },
    };
  },
  folder: async () => {
    const dir = await mkdtemp(join(tmpdir(), 'outbox-'));
    const outbox = join(dir, 'outbox');
    return {
      mailer: createFolderMailer(outbox, silent),
      delivered: async () => {
        const files = (await readdir(outbox)).filter((f) => f.endsWith('.eml')).sort();
        return Promise.all(files.map(async (f) => simpleParser(await readFile(join(outbox, f)))));
      },
      broken: async () => {
        // A file where the folder should be: nothing can be written.
        const blocked = join(dir, 'blocked');
        await writeFile(blocked, '');
        return createFolderMailer(join(blocked, 'outbox'), silent);
      },
      close: () => rm(dir, { recursive: true, force: true }),
    };
  },
};

describe.each(Object.keys(adapters))('Mailer contract: %s', (name) => {
  let h: Harness;
  beforeAll(async () => {
    h = await adapters[name]!();
  });
  afterAll(() => h.close());

  it('delivers a message whole: from, to, subject, text with its link, Message-ID', async () => {
    const text = 'Choose your password here:\nhttps://console.example/console/accept?token=abc_DEF-123&workspace=ws_1\n\nÜmlauts and long lines stay as they were.';
    await h.mailer.send({ id: 'eml_01TESTCONTRACT', to: 'ada@example.com', subject: 'You are invited — welcome', text }, FROM);
    const [mail] = (await h.delivered()).filter((m) => m.messageId === messageIdOf('eml_01TESTCONTRACT'));
    expect(mail).toBeDefined();
    expect(mail!.from?.value[0]).toMatchObject({ address: 'no-reply@lookup.test', name: 'Lookup console' });
    expect((Array.isArray(mail!.to) ? mail!.to[0] : mail!.to)?.value[0]?.address).toBe('ada@example.com');
    expect(mail!.subject).toBe('You are invited — welcome');
    expect(mail!.text?.trim()).toBe(text);
  });

  it('keeps each message apart', async () => {
    const before = (await h.delivered()).length;
    await h.mailer.send({ id: 'eml_01TESTCONTRACT2', to: 'bob@example.com', subject: 'one', text: 'first' }, FROM);
    await h.mailer.send({ id: 'eml_01TESTCONTRACT3', to: 'cy@example.com', subject: 'two', text: 'second' }, FROM);
    const after = await h.delivered();
    expect(after.length).toBe(before + 2);
    expect(after.map((m) => m.subject)).toEqual(expect.arrayContaining(['one', 'two']));
  });

  it('rejects when the message cannot be handed over', async () => {
    const broken = await h.broken();
    await expect(broken.send({ id: 'eml_01TESTCONTRACT4', to: 'dee@example.com', subject: 'lost?', text: 'no' }, FROM)).rejects.toThrow();
    expect((await h.delivered()).some((m) => m.subject === 'lost?')).toBe(false);
  });
});
