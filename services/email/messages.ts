import type { OutgoingEmail } from './email-outbox';

/** The texts of the emails the service sends: pure, one function each. Plain text only. */

export function invitationEmail(input: { to: string; workspaceName: string; role: string; link: string; expiresAt: string }): OutgoingEmail {
  return {
    kind: 'invitation',
    to: input.to,
    subject: `You are invited to the workspace ${input.workspaceName}`,
    text: [
      `You have been invited to join the workspace "${input.workspaceName}" of the Lookup console as ${input.role}.`,
      '',
      'Choose your password here (the link works once):',
      input.link,
      '',
      `It expires at ${input.expiresAt} (UTC). If you did not expect this invitation, ignore this email.`,
    ].join('\n'),
  };
}

export function passwordResetEmail(input: { to: string; workspaceName: string; link: string; expiresAt: string }): OutgoingEmail {
  return {
    kind: 'password_reset',
    to: input.to,
    subject: `Reset your password for ${input.workspaceName}`,
    text: [
      `Someone asked to reset the password of ${input.to} in the workspace "${input.workspaceName}" of the Lookup console.`,
      '',
      'Choose a new password here (the link works once; every session of yours ends):',
      input.link,
      '',
      `It expires at ${input.expiresAt} (UTC). If you did not ask for this, ignore this email: your password stays as it is.`,
    ].join('\n'),
  };
}

export function balanceLowEmail(input: { to: string; workspaceId: string; workspaceName: string; balance: number; threshold: number; consoleUrl: string }): OutgoingEmail {
  return {
    kind: 'balance_low',
    to: input.to,
    subject: `Low balance: ${input.workspaceName} has ${input.balance} credits left`,
    text: [
      `The balance of the workspace "${input.workspaceName}" (${input.workspaceId}) fell to ${input.balance} credits, below its alert threshold of ${input.threshold}.`,
      'Calls are refused with 402 once it cannot pay for them. Ask your operator for more credits.',
      '',
      `The console: ${input.consoleUrl}`,
    ].join('\n'),
  };
}
