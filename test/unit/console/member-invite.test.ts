import { describe, expect, it } from 'vitest';
import { parseInvocation, UsageError } from '../../../services/console/args';
import { run } from '../../../services/console/cli';

const env = { ADMIN_TOKEN: 't' };

describe('npm run admin -- member invite', () => {
  it('given a workspace and an email, then it invites an owner unless --role says otherwise', () => {
    expect(parseInvocation(['member', 'invite', 'ws_1', 'ada@example.com'], env).command).toEqual({ kind: 'member.invite', workspaceId: 'ws_1', email: 'ada@example.com', role: 'owner' });
    expect(parseInvocation(['member', 'invite', 'ws_1', 'bob@example.com', '--role', 'member'], env).command).toMatchObject({ role: 'member' });
  });
  it('given a wrong role or a missing email, then the command line is refused', () => {
    expect(() => parseInvocation(['member', 'invite', 'ws_1', 'a@example.com', '--role', 'admin'], env)).toThrow(UsageError);
    expect(() => parseInvocation(['member', 'invite', 'ws_1'], env)).toThrow(/missing <email>/);
  });
  it('posts to the admin API and prints the one-time link', async () => {
    const calls: { url: string; body: unknown }[] = [];
    const answer = { invitation_id: 'inv_1', email: 'ada@example.com', role: 'owner', expires_at: '2025-06-08T00:00:00.000Z', link: 'http://127.0.0.1:3000/console/accept?token=abc' };
    const fakeFetch = (async (url: string, init: RequestInit) => {
      calls.push({ url, body: JSON.parse(String(init.body)) });
      return new Response(JSON.stringify(answer), { status: 201, headers: { 'content-type': 'application/json' } });
    }) as unknown as typeof fetch;
    let out = '';
    const code = await run(['member', 'invite', 'ws_1', 'ada@example.com'], { env, stdout: { write: (t: string) => (out += t) }, stderr: { write: () => true }, fetch: fakeFetch });
    expect(code).toBe(0);
    expect(calls).toEqual([{ url: 'http://127.0.0.1:3000/admin/v1/workspaces/ws_1/invitations', body: { email: 'ada@example.com', role: 'owner' } }]);
    expect(out).toContain(answer.link);
  });
});
