import { STATUS_CODES, maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError, errorBody, type Detail } from '../../contracts/errors';
import { newRequestId } from '../common/ids';
import type { Config } from '../config/config';

/**
 * Answers to what never becomes a request: bytes Node's HTTP parser refuses (a header over
 * 16 KB, a bad Content-Length, a control character in a header or the path...) and CONNECT.
 * There is no request or response object, so the answer is written to the socket by hand, in the
 * same envelope and with the same headers as every other answer, and the connection is closed
 * (the parser cannot go on after an error).
 */

/** The catalogue's message speaks of the body; these answers are about the request around it. */
export const MALFORMED_REQUEST = 'The request is not well-formed HTTP/1.1; `details` says where.';

/** The parts of a client error this module reads (Node adds `code`, `reason`, `rawPacket`). */
export interface ClientError {
  code?: string;
  /** A Buffer in practice (Fastify's types say otherwise). */
  rawPacket?: unknown;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** What a header value may hold (RFC 9110: VCHAR, SP, HTAB, obs-text). */
const HEADER_VALUE = /^[\t\x20-\x7E\x80-\xFF]*$/;

/** `idempotency-key` -> `Idempotency-Key`: the spelling docs/api.md uses for `details.field`. */
function canonicalHeaderName(name: string): string {
  return name
    .toLowerCase()
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('-');
}

/** The name of the first header line whose value holds a character no header value may hold. */
export function headerWithBadValue(rawPacket: unknown): string | null {
  if (!Buffer.isBuffer(rawPacket)) return null;
  for (const line of rawPacket.toString('latin1').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon);
    if (HEADER_NAME.test(name) && !HEADER_VALUE.test(line.slice(colon + 1))) return canonicalHeaderName(name);
  }
  return null;
}

/** What was wrong, as an `error.details` entry; `field` names the part of the request. */
export function clientErrorDetail(error: ClientError): Detail {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { field: 'headers', issue: 'too_big', message: `The request line and headers must fit in ${maxHeaderSize} bytes.` };
    case 'HPE_INVALID_CONTENT_LENGTH':
      return { field: 'Content-Length', issue: 'invalid_type', message: 'Content-Length must be a number of bytes.' };
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { field: 'Content-Length', issue: 'invalid_type', message: 'Content-Length must be sent once.' };
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return {
        field: 'Transfer-Encoding',
        issue: 'invalid_type',
        message: 'Transfer-Encoding must end in chunked and must not come with Content-Length.',
      };
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_STRICT':
    case 'HPE_INVALID_EOF_STATE':
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { field: 'body', issue: 'invalid_type', message: 'The body is not well-formed HTTP/1.1 framing.' };
    case 'HPE_INVALID_METHOD':
      return { field: 'method', issue: 'invalid_type', message: 'The request does not start with an HTTP method.' };
    case 'HPE_INVALID_URL':
      return { field: 'path', issue: 'invalid_type', message: 'The path holds a character a URL may not (a control character, a space or a raw non-ASCII byte).' };
    case 'HPE_INVALID_VERSION':
    case 'HPE_INVALID_CONSTANT':
      return { field: 'request_line', issue: 'invalid_type', message: 'The request line must be `METHOD /path HTTP/1.1`, ended by CRLF.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { field: 'request', issue: 'invalid_type', message: 'The request did not arrive in full in time.' };
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_LF_EXPECTED':
    case 'HPE_CR_EXPECTED': {
      const header = headerWithBadValue(error.rawPacket);
      if (header !== null) {
        return { field: header, issue: 'invalid_type', message: `${header} holds a character a header may not (a control character).` };
      }
      return { field: 'headers', issue: 'invalid_type', message: 'A header line is not `Name: value` with a valid name and value.' };
    }
    default:
      return { field: 'request', issue: 'invalid_type', message: 'The request is not well-formed HTTP/1.1.' };
  }
}

/** A whole HTTP/1.1 response as bytes for a socket. */
export function rawHttpResponse(status: number, headers: Record<string, string | number>, body: string): string {
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** `{docs_url}` without a request: DOCS_URL, else the address the caller reached. */
export function docsUrlForSocket(config: Config, socket: Socket): string {
  if (config.docsUrl) return config.docsUrl;
  const address = (socket.localAddress ?? config.host).replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  const host = address.includes(':') ? `[${address}]` : address;
  return `http://${host}:${socket.localPort ?? config.port}/docs`;
}

/** A token from the caller's per-IP bucket: the headers to send, and the refusal when it is empty. */
export type Admission = { headers: Record<string, string>; refusal: ApiError | null };

export interface RawAnswererDeps {
  config: Config;
  /** Takes a token from the per-IP bucket of a caller without a valid key. */
  admit(ip: string, requestId: string): Promise<Admission>;
  log: { debug(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** Node's ServerResponse in flight on the socket, if any (an internal field Node's own answer reads too). */
type ServerSocket = Socket & {
  _httpMessage?: { headersSent: boolean; writableFinished: boolean; once(event: 'finish', listener: () => void): unknown } | null;
};

/**
 * Like Node's own answer, never in the middle of a response already on its way (a pipelined
 * request before the bad one): that one finishes, then the connection closes.
 */
function closeAfterResponseInFlight(socket: ServerSocket): boolean {
  const inFlight = socket._httpMessage;
  if (!inFlight?.headersSent) return false;
  if (inFlight.writableFinished) socket.end();
  else inFlight.once('finish', () => socket.end());
  return true;
}

export function createRawAnswerer(deps: RawAnswererDeps) {
  /** The envelope on the socket, then the connection closed once it is flushed. */
  async function answer(socket: ServerSocket, apiError: ApiError) {
    const requestId = newRequestId();
    const admission = await deps.admit(socket.remoteAddress ?? 'unknown', requestId);
    const sent = admission.refusal ?? apiError;
    if (closeAfterResponseInFlight(socket)) return;
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify({
      error: errorBody(sent, docsUrlForSocket(deps.config, socket)),
      meta: { request_id: requestId, credits_charged: 0, credits_remaining: null },
    });
    const headers: Record<string, string | number> = {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'X-Request-Id': requestId,
      ...admission.headers,
    };
    if (sent.retryAfterSeconds !== undefined) headers['Retry-After'] = sent.retryAfterSeconds;
    headers.Connection = 'close';
    deps.log.debug({ request_id: requestId, code: sent.code, details: sent.details }, 'refused before HTTP parsing completed');
    socket.end(rawHttpResponse(sent.status, headers, body), () => socket.destroy());
  }

  function answerOrClose(socket: ServerSocket, apiError: ApiError) {
    answer(socket, apiError).catch((err: unknown) => {
      deps.log.error({ err }, 'could not answer a request refused before HTTP parsing completed');
      socket.destroy();
    });
  }

  return {
    /** Fastify's `clientErrorHandler`: Node's HTTP parser refused the bytes. */
    onClientError(error: ClientError, socket: ServerSocket) {
      // A reset connection has nobody to answer.
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      answerOrClose(socket, new ApiError('invalid_request', { message: MALFORMED_REQUEST, details: [clientErrorDetail(error)] }));
    },
    /** CONNECT is no method of this API: route_not_found, like any other. */
    onConnect(socket: ServerSocket) {
      answerOrClose(socket, new ApiError('route_not_found', { message: 'No endpoint exists at this method and path.' }));
    },
  };
}
