/**
 * Google's two error shapes. The OAuth token endpoint answers RFC 6749 style
 * (`{"error":"unauthorized_client","error_description":…}`); the Directory API answers
 * `{"error":{"code","message","errors":[{message,domain,reason}],"status"}}`.
 */

export interface JsonReply {
  status: number;
  headers?: Record<string, string>;
  json: unknown;
}

export function oauthError(status: number, error: string, description: string): JsonReply {
  return { status, json: { error, error_description: description } };
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

export interface ApiErrorExtra {
  domain?: string;
  status?: string;
  headers?: Record<string, string>;
  details?: unknown[];
  location?: { location: string; locationType: string };
}

export function apiError(code: number, message: string, reason: string, extra: ApiErrorExtra = {}): JsonReply {
  const item: Record<string, unknown> = { message, domain: extra.domain ?? 'global', reason };
  if (extra.location) Object.assign(item, extra.location);
  const error: Record<string, unknown> = { code, message, errors: [item] };
  const status = extra.status ?? STATUS_NAMES[code];
  if (status !== undefined) error['status'] = status;
  if (extra.details) error['details'] = extra.details;
  return { status: code, json: { error }, ...(extra.headers ? { headers: extra.headers } : {}) };
}

/** What Google answers when the Admin SDK API is not enabled in the key's project. */
export function serviceDisabled(projectNumber: string): JsonReply {
  const link = `https://console.developers.google.com/apis/api/admin.googleapis.com/overview?project=${projectNumber}`;
  const message = `Admin SDK API has not been used in project ${projectNumber} before or it is disabled. Enable it by visiting ${link} then retry. If you enabled this API recently, wait a few minutes for the action to propagate to our systems and retry.`;
  return apiError(403, message, 'accessNotConfigured', {
    domain: 'usageLimits',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'SERVICE_DISABLED',
        domain: 'googleapis.com',
        metadata: { service: 'admin.googleapis.com', consumer: `projects/${projectNumber}` },
      },
    ],
  });
}

export const insufficientScopes = (): JsonReply =>
  apiError(403, 'Request had insufficient authentication scopes.', 'insufficientPermissions', {
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
        domain: 'googleapis.com',
        metadata: { service: 'admin.googleapis.com' },
      },
    ],
  });

export const notAuthorized = (): JsonReply => apiError(403, 'Not Authorized to access this resource/api', 'forbidden');
