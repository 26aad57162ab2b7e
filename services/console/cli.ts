import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AdminApiError, AdminClient, type AuditReport } from './admin-client';
import { parseInvocation, USAGE, UsageError, type Command, type Invocation } from './args';
import { writeExport } from './export';
import { auditProgressLine, auditReport, elapsed, fields, table } from './format';

/**
 * The admin console: `npm run admin -- <command>`. Exit codes: 0 done, 1 the API refused (printed
 * as `code: message`) or the audit found mismatches, 2 a command line that cannot be run.
 */

export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface CliIo {
  env: Record<string, string | undefined>;
  stdout: Output;
  stderr: Output;
  fetch?: typeof fetch;
  /** How often `audit` asks the server how its job stands (default 1 s). */
  auditPollMs?: number;
}

export async function run(argv: string[], io: CliIo): Promise<number> {
  const print = (text: string) => io.stdout.write(`${text}\n`);
  const note = (text: string) => io.stderr.write(`${text}\n`);

  let invocation: Invocation;
  try {
    invocation = parseInvocation(argv, io.env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    note(`error: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  const { command, json } = invocation;
  if (command.kind === 'help') {
    print(USAGE);
    return 0;
  }

  const client = new AdminClient({ baseUrl: invocation.url, token: invocation.token!, fetch: io.fetch });
  try {
    const result = await execute(client, command, io.stderr, io.auditPollMs ?? 1000);
    if (json) print(JSON.stringify(result.raw, null, 2));
    else {
      print(result.text);
      if (result.hint) note(result.hint);
    }
    return result.failed ? 1 : 0;
  } catch (err) {
    if (!(err instanceof AdminApiError)) throw err;
    note(`${err.code}: ${err.message}`);
    return 1;
  }
}

interface Outcome {
  raw: unknown;
  text: string;
  /** For a person reading, on stderr (next page, a key shown once). */
  hint?: string;
  failed?: boolean;
}

async function execute(client: AdminClient, command: Exclude<Command, { kind: 'help' }>, stderr: Output, auditPollMs: number): Promise<Outcome> {
  switch (command.kind) {
    case 'workspace.create': {
      const ws = await client.createWorkspace({ name: command.name, credits: command.credits, max_concurrency: command.maxConcurrency });
      return { raw: ws, text: fields(ws) };
    }
    case 'workspace.get': {
      const ws = await client.getWorkspace(command.workspaceId, command.asOf);
      return { raw: ws, text: fields(ws) };
    }
    case 'workspace.set-concurrency': {
      const ws = await client.setMaxConcurrency(command.workspaceId, command.maxConcurrency);
      return { raw: ws, text: fields(ws) };
    }
    case 'workspace.set-alert': {
      const ws = await client.setLowBalanceThreshold(command.workspaceId, command.lowBalanceThreshold);
      return { raw: ws, text: fields(ws) };
    }
    case 'credits.grant': {
      const answer = await client.grantCredits(command.workspaceId, command.amount, command.reason);
      return { raw: answer, text: `granted ${command.amount} credits to ${command.workspaceId}; balance ${answer.balance}` };
    }
    case 'key.create': {
      const key = await client.createKey(command.workspaceId, { name: command.name, rate_limit_per_minute: command.rateLimitPerMinute, ...(command.test ? { mode: 'test' as const } : {}) });
      return { raw: key, text: fields(key), hint: 'Store the key now: it is shown only this once.' };
    }
    case 'key.list': {
      const { data } = await client.listKeys(command.workspaceId);
      return {
        raw: { data },
        text: table(
          ['ID', 'PREFIX', 'NAME', 'MODE', 'CREATED', 'LAST USED', 'REVOKED'],
          data.map((k) => [k.id, k.prefix, k.name, k.mode, k.created_at, k.last_used_at, k.revoked_at]),
        ),
      };
    }
    case 'key.revoke': {
      const answer = await client.revokeKey(command.keyId);
      return { raw: answer, text: `revoked ${answer.id} at ${answer.revoked_at}${answer.deleted_watches.length > 0 ? `; deleted its watches ${answer.deleted_watches.join(', ')}` : ''}` };
    }
    case 'usage': {
      const { data } = await client.usage(command.workspaceId, { key_id: command.keyId, from: command.from, to: command.to });
      const total = (f: 'calls' | 'credits_charged' | 'credits_refunded' | 'errors') => data.reduce((sum, row) => sum + row[f], 0);
      return {
        raw: { data },
        text: table(
          ['DAY', 'KEY', 'OPERATION', 'CALLS', 'CHARGED', 'REFUNDED', 'ERRORS'],
          [
            ...data.map((r) => [r.day, r.key_id, r.operation, r.calls, r.credits_charged, r.credits_refunded, r.errors]),
            ...(data.length > 1 ? [['total', null, null, total('calls'), total('credits_charged'), total('credits_refunded'), total('errors')]] : []),
          ],
        ),
      };
    }
    case 'ledger': {
      const filter = { request_id: command.requestId, after: command.after, limit: command.limit, as_of: command.asOf };
      const page = command.all
        ? { data: await client.ledgerAll(command.workspaceId, filter), next: null }
        : await client.ledger(command.workspaceId, filter);
      return {
        raw: page,
        text: table(
          ['POSITION', 'TYPE', 'REQUEST', 'KEY', 'CREDITS', 'BALANCE AFTER', 'RECORDED'],
          page.data.map((e) => [e.position, e.type, e.request_id, e.key_id, e.credits, e.balance_after, e.recorded_at]),
        ),
        hint: page.next === null ? undefined : `more entries: add --after ${page.next} (or --all)`,
      };
    }
    case 'statement': {
      const period = { from: command.from, to: command.to };
      if (command.csv) {
        const csv = await client.statementCsv(command.workspaceId, period);
        return { raw: csv, text: csv.trimEnd() };
      }
      const s = await client.statement(command.workspaceId, period);
      const totals = table(
        ['OPERATION', 'CALLS', 'CHARGED', 'REFUNDED'],
        s.by_operation.map((o) => [o.operation, o.calls, o.charged, o.refunded]),
      );
      const { by_operation: _, ...head } = s;
      return { raw: s, text: `${fields(head)}\n\n${totals}` };
    }
    case 'export.ledger': {
      const period = { from: command.from, to: command.to };
      const ledger = await withWaitingLine(stderr, 'reading the ledger', () => client.ledgerExport(period));
      const { data: usage } = await client.usageExport(period);
      const files = await writeExport(command.out, command.format, ledger, usage);
      return { raw: { files, ledger_entries: ledger.length, usage_rows: usage.length }, text: `wrote ${ledger.length} ledger entries and ${usage.length} usage rows:\n${files.join('\n')}` };
    }
    case 'member.invite': {
      const invitation = await client.inviteMember(command.workspaceId, { email: command.email, role: command.role });
      return { raw: invitation, text: fields(invitation), hint: 'Send the link to the person: it works once, for 7 days.' };
    }
    case 'audit': {
      const report = await followAudit(client, stderr, auditPollMs);
      return { raw: report, text: auditReport(report), failed: !report.ok };
    }
  }
}

/**
 * Starts an audit job on the server (or joins the one running there) and follows it to its
 * report, with its progress on stderr at each poll. A server without audit jobs audits in one
 * call, as before.
 */
async function followAudit(client: AdminClient, stderr: Output, pollMs: number): Promise<AuditReport> {
  let started: Awaited<ReturnType<AdminClient['startAudit']>>;
  try {
    started = await client.startAudit();
  } catch (err) {
    if (!(err instanceof AdminApiError && err.code === 'route_not_found')) throw err;
    return withWaitingLine(stderr, 'auditing the whole log (this server reports no progress)', () => client.audit());
  }
  let job = started.job;
  stderr.write(`audit ${job.id}: ${started.alreadyRunning ? `already running on the server since ${job.started_at}, following it` : 'started on the server'}\n`);
  while (job.state === 'running') {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    try {
      job = await client.auditJob(job.id);
    } catch (err) {
      if (err instanceof AdminApiError && err.code === 'not_found') {
        throw new AdminApiError('not_found', `the server no longer holds audit ${job.id} (it restarted, or another instance answered behind the same address): run the audit again`, err.status);
      }
      throw err;
    }
    if (job.state !== 'running') break;
    // Redrawn in place on a terminal; a line per poll in a log.
    stderr.write(stderr.isTTY ? `\r\x1b[2K${auditProgressLine(job)}` : `${auditProgressLine(job)}\n`);
  }
  stderr.write(`${stderr.isTTY ? '\r\x1b[2K' : ''}${auditProgressLine(job)}\n`);
  if (job.state === 'failed' || !job.report) throw new AdminApiError('audit_failed', job.error ?? 'the audit ended without a report', 0);
  return job.report;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A spinner with the elapsed time on a terminal while `work` runs; nothing when not a TTY. */
async function withWaitingLine<T>(out: Output, label: string, work: () => Promise<T>): Promise<T> {
  if (!out.isTTY) return work();
  const started = Date.now();
  let frame = 0;
  const draw = () => out.write(`\r${SPINNER[frame++ % SPINNER.length]} ${label}… ${elapsed(Date.now() - started)}`);
  draw();
  const timer = setInterval(draw, 100);
  try {
    return await work();
  } finally {
    clearInterval(timer);
    out.write(`\r\x1b[2K`);
  }
}

function isMain(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  run(process.argv.slice(2), { env: process.env, stdout: process.stdout, stderr: process.stderr }).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`internal_error: ${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
