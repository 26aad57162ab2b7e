// Every answer of the route suites checked against one of the service's OpenAPI documents: its
// status is one the operation lists, its body matches that status's schema for its content type,
// and it carries every header the document requires there. Answers at no operation of the
// document (HTML pages, unknown paths and methods) have nothing to be checked against.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';

type Json = Record<string, any>;

const DOCUMENT_ID = 'https://openapi.invalid/openapi.json';

export interface Operation {
  method: string;
  path: string;
  pattern: RegExp;
  node: Json;
  pointer: string;
}

export class OpenApiConformance {
  private readonly ajv: Ajv2020;
  private readonly operations: Operation[] = [];
  private readonly validators = new Map<string, ValidateFunction>();
  /** `METHOD path status` of each answer checked, for the suites that want to see what was covered. */
  readonly checked = new Set<string>();

  constructor(private readonly document: Json) {
    // OpenAPI keywords (example, discriminator...) sit in the schemas: not strict.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    for (const [path, methods] of Object.entries<Json>(document.paths)) {
      const pattern = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`);
      for (const [method, node] of Object.entries<Json>(methods)) {
        this.operations.push({ method: method.toUpperCase(), path, pattern, node, pointer: `#/paths/${pointerSegment(path)}/${method}` });
      }
    }
    // Compiled up front, not at an answer's check: a suite timing a bucket's refill must not wait on ajv.
    for (const op of this.operations) {
      for (const [status, response] of Object.entries<Json>(op.node.responses ?? {})) {
        const resolved = this.deref(response);
        for (const mediaType of Object.keys(resolved.content ?? {})) this.validator(`${op.pointer}/responses/${status}/content/${pointerSegment(mediaType)}/schema`);
        for (const [name, header] of Object.entries<Json>(resolved.headers ?? {})) {
          this.headerValidator(`${op.pointer}/responses/${status}/headers/${pointerSegment(name)}`, this.deref(this.deref(header).schema ?? {}));
        }
      }
    }
  }

  /** The documented operation a request reaches, if any. */
  operationOf(method: string, url: string): Operation | undefined {
    const path = url.split('?')[0]!;
    return this.operations.find((op) => op.method === method.toUpperCase() && op.pattern.test(path));
  }

  allOperations(): readonly Operation[] {
    return this.operations;
  }

  /** The mismatches of one answer; empty when it is as documented (or at no documented operation). */
  mismatches(method: string, url: string, answer: LightMyRequestResponse): string[] {
    const op = this.operationOf(method, url);
    if (!op) return [];
    const status = String(answer.statusCode);
    const at = `${op.method} ${op.path} ${status}`;
    const response = op.node.responses?.[status] ?? op.node.responses?.[`${status[0]}XX`] ?? op.node.responses?.default;
    if (!response) return [`${at}: status not in the document (it lists ${Object.keys(op.node.responses ?? {}).join(', ')})`];
    this.checked.add(at);
    const resolved = this.deref(response);
    const problems: string[] = [];

    for (const [name, headerNode] of Object.entries<Json>(resolved.headers ?? {})) {
      const header = this.deref(headerNode);
      const value = answer.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) problems.push(`${at}: required header ${name} missing`);
        continue;
      }
      const text = Array.isArray(value) ? value.join(', ') : String(value);
      const schema = this.deref(header.schema ?? {});
      const typed = schema.type === 'integer' || schema.type === 'number' ? (/^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text) : text;
      const validate = this.headerValidator(`${op.pointer}/responses/${status}/headers/${pointerSegment(name)}`, schema);
      if (!validate(typed)) problems.push(`${at}: header ${name}: ${JSON.stringify(text)} ${this.ajv.errorsText(validate.errors)}`);
    }

    const content: Json = resolved.content ?? {};
    const mediaType = String(answer.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (Object.keys(content).length === 0) {
      if (answer.body.length > 0) problems.push(`${at}: a body (${mediaType}) where the document has none`);
      return problems;
    }
    if (!(mediaType in content)) return [...problems, `${at}: content type ${JSON.stringify(mediaType)} not among ${Object.keys(content).join(', ')}`];
    let body: unknown = answer.body;
    if (mediaType === 'application/json') {
      try {
        body = JSON.parse(answer.body);
      } catch {
        return [...problems, `${at}: the body is not JSON`];
      }
    }
    const validate = this.validator(`${op.pointer}/responses/${status}/content/${pointerSegment(mediaType)}/schema`);
    if (!validate(body)) problems.push(`${at}: body ${this.ajv.errorsText(validate.errors)}: ${answer.body.slice(0, 300)}`);
    return problems;
  }

  /** Throws with every mismatch of the answer. */
  check(method: string, url: string, answer: LightMyRequestResponse): void {
    const problems = this.mismatches(method, url, answer);
    if (problems.length > 0) throw new Error(`answer not as the OpenAPI document says:\n  ${problems.join('\n  ')}`);
  }

  /** A schema of the document, compiled where it stands so its `$ref`s resolve. */
  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  /** A header's schema: a plain value schema, without `$ref`s. */
  private headerValidator(pointer: string, schema: Json): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  private deref(node: Json): Json {
    let current = node;
    while (typeof current?.$ref === 'string') {
      current = (current.$ref as string)
        .slice(2)
        .split('/')
        .map(segmentOf)
        .reduce((acc: Json, key: string) => acc?.[key], this.document);
    }
    return current;
  }
}

/** JSON Pointer escaping (RFC 6901), %-encoded as in a URI fragment. */
function pointerSegment(segment: string): string {
  return encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1')).replace(/%7E/gi, '~');
}

function segmentOf(segment: string): string {
  return decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~');
}
