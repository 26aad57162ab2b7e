/**
 * The SQL of each call a spy on pg's `Client.prototype.query` saw: pg takes a text, a config
 * object or a query object (the service passes the latter two), each with its text.
 */
export function queryTexts(calls: unknown[][]): string[] {
  return calls.map(([query]) => (typeof query === 'string' ? query : String((query as { text?: string } | undefined)?.text ?? '')));
}
