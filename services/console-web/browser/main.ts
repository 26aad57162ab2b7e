// The workspace console's one script: a client of the /console/v1 JSON API, bundled by esbuild
// (services/console-web/bundle.ts). No framework, no inline code: the pages' CSP allows only
// this origin's files.
import type { Session } from './api';
import { contract } from './contract';
import { showError } from './dom';
import { keys } from './pages/keys';
import { ledger } from './pages/ledger';
import { members } from './pages/members';
import { overview } from './pages/overview';
import { request } from './pages/request';
import { account, accept, forgot, loadSession, reset, signin } from './pages/session';
import { statement } from './pages/statement';
import { usage } from './pages/usage';
import { webhooks } from './pages/webhooks';

const PAGES: Record<string, (session: Session) => Promise<void>> = { overview, keys, usage, ledger, request, statement, members, webhooks, account };
const OPEN_PAGES: Record<string, () => Promise<void>> = { signin, accept, forgot, reset };

async function start() {
  const open = OPEN_PAGES[contract.page];
  if (open) await open();
  else await PAGES[contract.page]!(await loadSession());
  document.body.dataset.ready = 'true';
}

start().catch((err: unknown) => {
  showError(err);
  document.body.dataset.ready = 'error';
});
