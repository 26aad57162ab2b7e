import { describe, expect, it } from 'vitest';
import { clientErrorDetail, headerWithBadValue, rawHttpResponse } from '../../../services/http/client-errors';
import { PATHS } from '../../../services/lookup/source/wire';

const packet = (text: string) => Buffer.from(text, 'latin1');

describe('clientErrorDetail', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 'headers', 'too_big'],
    ['HPE_INVALID_CONTENT_LENGTH', 'Content-Length', 'invalid_type'],
    ['HPE_UNEXPECTED_CONTENT_LENGTH', 'Content-Length', 'invalid_type'],
    ['HPE_INVALID_TRANSFER_ENCODING', 'Transfer-Encoding', 'invalid_type'],
    ['HPE_INVALID_CHUNK_SIZE', 'body', 'invalid_type'],
    ['HPE_STRICT', 'body', 'invalid_type'],
    ['HPE_INVALID_METHOD', 'method', 'invalid_type'],
    ['HPE_INVALID_URL', 'path', 'invalid_type'],
    ['HPE_INVALID_VERSION', 'request_line', 'invalid_type'],
    ['HPE_INVALID_CONSTANT', 'request_line', 'invalid_type'],
    ['ERR_HTTP_REQUEST_TIMEOUT', 'request', 'invalid_type'],
    ['HPE_SOMETHING_NEW', 'request', 'invalid_type'],
    [undefined, 'request', 'invalid_type'],
  ])('given Node error %s, then field %s, issue %s', (code, field, issue) => {
    expect(clientErrorDetail({ code })).toEqual({ field, issue, message: expect.any(String) });
  });

  it('given a control character in a header value, then the header is named as docs/api.md spells it', () => {
    const raw = packet('POST /v1/company HTTP/1.1\r\nHost: x\r\nidempotency-key: a\x01b\r\n\r\n');
    expect(clientErrorDetail({ code: 'HPE_INVALID_HEADER_TOKEN', rawPacket: raw })).toEqual({
      field: 'Idempotency-Key',
      issue: 'invalid_type',
      message: expect.any(String),
    });
  });

  it('given a bad header name or a folded line, then `headers` as a whole', () => {
    for (const text of ['GET / HTTP/1.1\r\nBad Header: 1\r\n\r\n', 'GET / HTTP/1.1\r\nX-A: 1\r\n  folded\r\n\r\n']) {
      expect(clientErrorDetail({ code: 'HPE_INVALID_HEADER_TOKEN', rawPacket: packet(text) }).field).toBe('headers');
    }
    expect(clientErrorDetail({ code: 'HPE_INVALID_HEADER_TOKEN' }).field).toBe('headers');
  });
});

describe('headerWithBadValue', () => {
  it('finds the first header whose value holds a control character, DEL or NUL, in a later pipelined request too', () => {
    expect(headerWithBadValue(packet('GET / HTTP/1.1\r\nHost: x\r\nX-Trace: a\x7fb\r\n\r\n'))).toBe('X-Trace');
    expect(headerWithBadValue(packet('GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nX-A: \x00\r\n\r\n'))).toBe('X-A');
  });

  it('accepts tabs, spaces and obs-text in values, and reads nothing from what is no buffer', () => {
    expect(headerWithBadValue(packet('GET / HTTP/1.1\r\nX-A: a\tb c\xe9\r\n\r\n'))).toBeNull();
    expect(headerWithBadValue(undefined)).toBeNull();
    expect(headerWithBadValue({ type: 'Buffer', data: [] })).toBeNull();
  });
});

describe('rawHttpResponse', () => {
  it('writes a status line, the headers and the body, separated by CRLF', () => {
    expect(rawHttpResponse(400, { 'Content-Length': 2, Connection: 'close' }, '{}')).toBe(
      'HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
    );
  });
});

describe('wire PATHS', () => {
  it('never throws on text with an unpaired surrogate: it is encoded as U+FFFD, as the URL standard does', () => {
    expect(PATHS.search('acme\uD800', 10)).toBe('/search?q=acme%EF%BF%BD&limit=10');
    expect(PATHS.personByName('\uDC00Jane')).toBe('/people/by-name?name=%EF%BF%BDJane');
    expect(PATHS.companyBySlug('acme-robotics')).toBe('/companies/by-slug/acme-robotics');
  });
});
