/**
 * The read-only guard of `plan` and the connectivity check: an undici interceptor that
 * refuses every request but GET and HEAD before it reaches a socket, with a stable code.
 * It sits under the whole client (JSON and streamed requests alike), so no later change
 * to the planning path can make a dry run write, whatever code it calls.
 */
import type { Dispatcher } from 'undici';
import { ErrorCodes, SyncError } from '../errors.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD']);

export function readOnlyRefusal(method: string, path: string): SyncError {
  // The path without its query: filters may hold user names, which need not be in an error.
  return new SyncError(
    ErrorCodes.READ_ONLY,
    'fatal',
    `refused ${method} ${path.split('?')[0] ?? ''}: this client is read-only (plan and connectivity checks never write to the platform)`,
  );
}

/** Throws before dispatching a non-GET/HEAD request; undici hands the throw to the caller as the request's error. */
export const readOnlyInterceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  const method = String(opts.method).toUpperCase();
  if (!SAFE_METHODS.has(method)) throw readOnlyRefusal(method, opts.path);
  return dispatch(opts, handler);
};
