import { CLOUDEVENTS } from '../../contracts/jsonschema';

/** The CloudEvents 1.0 attributes the relay sets on every message. */
export interface CloudEventAttributes {
  id: string;
  type: string;
  source: string;
  subject: string;
  /** RFC 3339. */
  time: string;
}

/**
 * Kafka headers of a message in CloudEvents binary mode: each attribute as a `ce_` header,
 * datacontenttype as `content-type`; the message key and value stay the relay's own.
 *
 * Written out rather than produced per message by the `cloudevents` SDK (`new CloudEvent` +
 * `Kafka.binary`), whose per-message cost outweighs the rest of the relay's work. The unit tests (test/unit/relay/cloudevents.test.ts) hold
 * these headers to the SDK: equal to what `Kafka.binary` produces, and read back by
 * `Kafka.toEvent` into a CloudEvent that passes the SDK's strict validation, for every event type.
 */
export function cloudEventHeaders(attributes: CloudEventAttributes): Record<string, string> {
  return {
    ce_specversion: CLOUDEVENTS.specVersion,
    ce_id: attributes.id,
    ce_type: attributes.type,
    ce_source: attributes.source,
    ce_subject: attributes.subject,
    ce_time: attributes.time,
    'content-type': CLOUDEVENTS.contentType,
  };
}
