import { randomBytes } from 'node:crypto';
import { ulid } from 'ulid';

/**
 * ULID randomness from a pooled CSPRNG buffer: ulid's default asks the OS once per character of
 * every id. A byte / 256 maps evenly onto 32 symbols.
 */
let pool = Buffer.alloc(0);
let offset = 0;
function pooledRandom(): number {
  if (offset >= pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  return pool[offset++]! / 256;
}
const newUlid = () => ulid(undefined, pooledRandom);

export const newRequestId = () => `req_${newUlid()}`;
export const newWorkspaceId = () => `ws_${newUlid()}`;
export const newKeyId = () => `key_${newUlid()}`;
export const newAuditId = () => `aud_${newUlid()}`;

export const newWebhookEndpointId = () => `whep_${newUlid()}`;
/** A webhook delivery: its `webhook-id`. */
export const newWebhookMessageId = () => `msg_${newUlid()}`;
export const newWatchId = () => `wat_${newUlid()}`;
/** An email of the outbox: also its Message-ID (services/email/mailer.ts). */
export const newEmailId = () => `eml_${newUlid()}`;
export const newInvitationId = () => `inv_${newUlid()}`;
export const newMemberId = () => `mem_${newUlid()}`;
