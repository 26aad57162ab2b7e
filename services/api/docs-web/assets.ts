import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { DOCS_ICON_LINK, DOCS_NAV_HTML, escapeHtml } from '../../../contracts/errors';
import { type StaticAsset, staticAsset } from '../../http/static-assets';


/** The style of /docs, /docs/errors and the frame of /docs/reference: readable on a phone and at 1280 px. */
const DOCS_CSS = `:root{color-scheme:light;--ink:#1f2933;--muted:#52606d;--line:#d9e2ec;--accent:#2457c5;--code:#f0f4f8}
*{box-sizing:border-box}
body{margin:0 auto;max-width:60rem;padding:1rem 1.25rem 3rem;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);overflow-wrap:anywhere}
h1{font-size:1.75rem;margin:1rem 0}h1 small{font-size:.9rem;color:var(--muted);font-weight:normal}
h2{font-size:1.3rem;margin-top:2.25rem;padding-top:.5rem;border-top:1px solid var(--line)}
a{color:var(--accent)}
code{font:.9em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--code);padding:.05em .3em;border-radius:3px}
pre{background:var(--code);padding:.75rem 1rem;border-radius:6px;overflow-x:auto;max-width:100%}pre code{background:none;padding:0}
table{border-collapse:collapse;width:100%;display:block;overflow-x:auto;margin:.75rem 0}
th,td{text-align:left;vertical-align:top;padding:.4rem .6rem;border-bottom:1px solid var(--line)}th{background:var(--code)}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{font-weight:600}dd{margin:0}
nav.docs-nav{display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;padding:.5rem 0;border-bottom:1px solid var(--line)}
body.reference{max-width:none;padding:0}body.reference nav.docs-nav{padding:.5rem 1.25rem}
`;

const requireFromHere = createRequire(import.meta.url);

/** The one image Redoc's bundle loads from its CDN (the side menu's "API docs by Redocly" logo). */
const REDOC_REMOTE_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

/**
 * Nothing is loaded from another host: the logo's address becomes empty, so the image fails at once
 * and Redoc drops it (its onError), leaving the text link. Fails loudly when an upgrade moves it.
 */
function withoutRemoteLogo(bundle: string): string {
  if (!bundle.includes(REDOC_REMOTE_LOGO)) throw new Error(`Redoc's bundle no longer names ${REDOC_REMOTE_LOGO}: check it for other remote loads`);
  return bundle.replaceAll(REDOC_REMOTE_LOGO, '');
}

/**
 * Run before Redoc's bundle, under the page's nonce: every style element the page's scripts create
 * carries that nonce, so the CSP needs no 'unsafe-inline' for styles. Redoc's own `nonce` option
 * cannot do it: the standalone bundle reads it from the `<redoc>` element's attributes, which the
 * browser empties (nonce hiding), and the bundle injects its scrollbar CSS before any option is
 * read (docs/adr/0029-api-reference-redoc.md). Only the document's own createElement is wrapped.
 */
const REFERENCE_NONCE_JS = `(function () {
  var nonce = document.currentScript.nonce;
  var create = document.createElement.bind(document);
  document.createElement = function (name, options) {
    var element = create(name, options);
    if (String(name).toLowerCase() === 'style') element.nonce = nonce;
    return element;
  };
})();
`;

/**
 * The files of /docs/assets: Redoc's standalone browser bundle (served from this host, so the
 * reference loads nothing from elsewhere), the script that gives its style elements the page's
 * nonce, and the docs' style sheet.
 */
function loadStaticAssets(): ReadonlyMap<string, StaticAsset> {
  const files: [string, string, Buffer][] = [
    ['redoc.standalone.js', 'text/javascript; charset=utf-8', Buffer.from(withoutRemoteLogo(readFileSync(requireFromHere.resolve('redoc/bundles/redoc.standalone.js'), 'utf8')))],
    ['reference-nonce.js', 'text/javascript; charset=utf-8', Buffer.from(REFERENCE_NONCE_JS)],
    ['docs.css', 'text/css; charset=utf-8', Buffer.from(DOCS_CSS)],
  ];
  return new Map(files.map(([name, type, body]) => [name, staticAsset(type, body)]));
}

let loaded: ReadonlyMap<string, StaticAsset> | undefined;
/** Read once, on first use: the bundle is about 1 MB. */
export const docsAssets = (): ReadonlyMap<string, StaticAsset> => (loaded ??= loadStaticAssets());

/** The versioned URL of a docs asset, cached for good by browsers and proxies. */
export const docsAssetUrl = (name: string): string => `/docs/assets/${name}?v=${docsAssets().get(name)!.version}`;

/** A fresh nonce per answer of the reference page: 128 random bits, base64. */
export const newStyleNonce = (): string => randomBytes(16).toString('base64');

/**
 * The reference page's CSP: scripts and style sheets from this host only; style elements only with
 * the page's nonce (Redoc's, through reference-nonce.js). Style attributes need nothing: Redoc
 * (React) sets them through the CSSOM, which the CSP does not govern.
 */
export const referenceCsp = (nonce: string): string =>
  `default-src 'none'; script-src 'self'; style-src 'self' 'nonce-${nonce}'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/**
 * The API reference: Redoc renders the public OpenAPI document in the page. The `<redoc>` element
 * is how the standalone bundle starts itself, so the page carries no inline script. `nonce`: the
 * one of this answer's CSP (referenceCsp), for Redoc's style elements.
 */
export function renderReferenceHtml(openApiPath: string, nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
${DOCS_ICON_LINK}<title>API reference: Company and Person Lookup API</title>
<link rel="stylesheet" href="${docsAssetUrl('docs.css')}"></head>
<body class="reference">
${DOCS_NAV_HTML}
<redoc spec-url="${escapeHtml(openApiPath)}" disable-search="true" hide-loading="true"></redoc>
<script src="${docsAssetUrl('reference-nonce.js')}" nonce="${escapeHtml(nonce)}"></script>
<script src="${docsAssetUrl('redoc.standalone.js')}"></script>
</body>
</html>
`;
}
