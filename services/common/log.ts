/** pino-compatible, so fastify's `app.log` fits wherever one of these is asked for. */
export interface Logger {
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/**
 * For work that runs outside any request (background loops, connection handlers): one JSON object
 * per line, at LOG_LEVEL and above. An `err` field is written as its type, code and message.
 */
export function backgroundLogger(level = 'info', stream: NodeJS.WritableStream = process.stderr): Logger {
  const threshold = LEVELS[level] ?? LEVELS.info!;
  const write = (name: string) => (fields: object, message?: string) => {
    if (LEVELS[name]! < threshold) return;
    const record: Record<string, unknown> = { time: new Date().toISOString(), level: name, msg: message, ...fields };
    if ('err' in record) record.err = describeError(record.err);
    stream.write(`${JSON.stringify(record)}\n`);
  };
  return { info: write('info'), warn: write('warn'), error: write('error') };
}

/** A logged `err`: type, message, code, stack, and the chain of causes under it (at most 8 deep). */
export function describeError(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  const cause = (err as { cause?: unknown }).cause;
  return {
    type: err.name,
    message: err.message,
    ...(code === undefined ? {} : { code }),
    stack: err.stack ?? '',
    ...(cause === undefined || depth >= 8 ? {} : { cause: describeError(cause, depth + 1) }),
  };
}

/**
 * For errors a loop or a hot path repeats while a dependency is out: the first of a run, then
 * every `n`th. A new message, or one after a quiet minute, starts a new run.
 */
export function everyNthError(log: Logger, message: string, context: object = {}, n = 20): (err: unknown) => void {
  let count = 0;
  let last = '';
  let lastAt = 0;
  return (err) => {
    const text = err instanceof Error ? err.message : String(err);
    count = text === last && Date.now() - lastAt < 60_000 ? count + 1 : 1;
    last = text;
    lastAt = Date.now();
    if (count % n === 1 || n === 1) log.warn({ ...context, err, repeated: count }, message);
  };
}
