/** The simulator's SCIM error: thrown anywhere below the routes, rendered once as RFC 7644 §3.12 JSON. */
import { SCHEMA_ERROR, type ScimErrorBody } from '../platform/scim/types.ts';

export type ScimType =
  | 'uniqueness'
  | 'invalidFilter'
  | 'invalidPath'
  | 'invalidValue'
  | 'invalidSyntax'
  | 'mutability'
  | 'noTarget'
  | 'tooMany'
  | 'invalidVers';

export class ScimHttpError extends Error {
  readonly status: number;
  readonly scimType: ScimType | undefined;

  constructor(status: number, detail: string, scimType?: ScimType) {
    super(detail);
    this.name = 'ScimHttpError';
    this.status = status;
    this.scimType = scimType;
  }

  toBody(): ScimErrorBody {
    return scimErrorBody(this.status, this.message, this.scimType);
  }
}

export function scimErrorBody(status: number, detail: string, scimType?: string): ScimErrorBody {
  return { schemas: [SCHEMA_ERROR], status: String(status), ...(scimType ? { scimType } : {}), detail };
}

export const badValue = (detail: string): ScimHttpError => new ScimHttpError(400, detail, 'invalidValue');
export const badPath = (detail: string): ScimHttpError => new ScimHttpError(400, detail, 'invalidPath');
export const notFound = (what: string): ScimHttpError => new ScimHttpError(404, `${what} not found`);
