/**
 * What the contract says that the script needs at run time, served with the page by
 * services/console-web/pages.ts (body data attributes): nothing of it is kept here by hand.
 */
const data = document.body.dataset;

export const contract = {
  page: data.page ?? '',
  /** The operations of the contract, in its order: each keeps its colour by position. */
  operations: (data.operations ?? '').split(' ').filter(Boolean),
  csrfHeader: data.csrfHeader ?? '',
};
