import type { z } from 'zod';
import { ApiError } from '../../contracts/errors';
import type { EndpointById } from '../../contracts/endpoints';
import type { BATCH_ITEM_ENDPOINTS } from '../../contracts/endpoints';
import type { Caller, LookupResult, LookupService } from '../lookup/lookup-service';
import { parseCompanyReference, parseDomain, parsePersonReference } from '../lookup/references';

/** An endpoint whose call is one lookup or search (and so may be a batch item). */
export type LookupEndpointId = (typeof BATCH_ITEM_ENDPOINTS)[keyof typeof BATCH_ITEM_ENDPOINTS];
type BodyOf<Id extends LookupEndpointId> = z.output<EndpointById<Id>['body']>;

/** A call ready to run: its reference parsed, its lookup not yet started. */
export type LookupCall = (caller: Caller) => Promise<LookupResult>;

/**
 * Each lookup endpoint's call from its checked body: the reference parsed (a malformed one is
 * its 400, before any charge), then its lookup. The single routes and the batch items share it.
 */
export const LOOKUP_CALLS: { [Id in LookupEndpointId]: (lookups: LookupService, body: BodyOf<Id>) => LookupCall } = {
  lookupCompany: (lookups, body) => {
    const parsed = parseCompanyReference(body.url);
    if (!parsed.ok) throw new ApiError('invalid_company_reference');
    return (caller) => lookups.company(caller, parsed.ref, body.max_age, body.on_error);
  },
  lookupDomain: (lookups, body) => {
    const parsed = parseDomain(body.domain);
    if (!parsed.ok) throw new ApiError('invalid_domain');
    return (caller) => lookups.domain(caller, parsed.domain, body.max_age, body.on_error);
  },
  lookupPerson: (lookups, body) => {
    const parsed = parsePersonReference(body.url);
    if (!parsed.ok) throw new ApiError('invalid_person_reference');
    return (caller) => lookups.person(caller, parsed.ref, body.max_age, body.on_error);
  },
  search: (lookups, body) => (caller) => lookups.search(caller, body.query, body.limit, body.max_age, body.on_error),
};
