/**
 * The one-time links of the console's emails. Each names the workspace too: the page shows where
 * the member will sign in. The token is a query parameter the page removes from the address bar.
 */
export const invitationLink = (baseUrl: string, token: string, workspaceId: string) =>
  `${baseUrl}/console/accept?token=${token}&workspace=${encodeURIComponent(workspaceId)}`;

export const passwordResetLink = (baseUrl: string, token: string, workspaceId: string) =>
  `${baseUrl}/console/reset?token=${token}&workspace=${encodeURIComponent(workspaceId)}`;

/** The console's first page (a low-balance email links to it). */
export const consoleOverviewLink = (baseUrl: string) => `${baseUrl}/console/overview`;
