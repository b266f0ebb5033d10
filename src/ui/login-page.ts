/**
 * The only page an anonymous visitor gets: a sign-in form (when a read token is configured)
 * or a pointer to the proxy. No tenant, count or name appears on it.
 */
import { html } from './html.ts';
import { layout } from './page.ts';

export interface LoginPageOptions {
  token: boolean;
  proxy: boolean;
  /** Where to go after signing in (a /ui path). */
  next: string;
  error?: string;
}

export function loginPage(o: LoginPageOptions): string {
  const body = html`<h1>Sign in</h1>
${o.error ? html`<p class="notice error" role="alert">${o.error}</p>` : ''}
${
  o.token
    ? html`<form class="login" method="post" action="/ui/login">
<input type="hidden" name="next" value="${o.next}">
<div><label for="read-token">Read token</label><input id="read-token" name="token" type="password" autocomplete="current-password" required></div>
<button type="submit">Sign in</button>
</form>`
    : ''
}
${o.proxy ? html`<p>Or sign in through the single sign-on proxy in front of this page.</p>` : ''}
${
  !o.token && !o.proxy
    ? html`<p>This status page has no way to sign in configured: set <code>daemon.ui.readTokenFile</code> or <code>daemon.ui.trustedProxy</code> (docs/daemon.md).</p>`
    : ''
}`;
  return layout('Sign in', body, []);
}

/** A safe place to return to after signing in: a path under /ui on this server, never another site. */
export function nextPath(candidate: string | null | undefined): string {
  if (!candidate || candidate.length > 500) return '/ui';
  if (!/^\/ui(?:[/?#]|$)/.test(candidate) || candidate.includes('\\') || /[\r\n]/.test(candidate)) return '/ui';
  if (candidate.startsWith('/ui/login') || candidate.startsWith('/ui/logout')) return '/ui';
  return candidate;
}
