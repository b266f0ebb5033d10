/**
 * Config keys whose value is a path to a file the loader reads at start-up
 * (`platform.tokenFile`, `redis.passwordFile`, `platform.caFile`…). Marking them in the
 * schema, rather than matching on a name suffix, keeps an output path such as a file
 * sink's `path` from ever being read. The loader walks the parsed config and, for every
 * marked key, reads the file (relative to the config file), fails loudly if it is
 * unreadable or empty, and hands the content out as a Secret.
 */
import { z } from 'zod';

export interface FileRefMeta {
  /** True for credentials: content is never shown; false for e.g. a CA bundle. */
  secret: boolean;
}

export const fileRefs = z.registry<FileRefMeta>();

/** A path to a file holding a credential (a mounted Kubernetes secret); one trailing newline is ignored. */
export function secretFile(): z.ZodString {
  return z.string().min(1, 'must be a file path, e.g. /var/run/secrets/scim/token').register(fileRefs, { secret: true });
}

/** A path to a non-secret file whose content is needed at run time (e.g. a PEM CA bundle). */
export function contentFile(): z.ZodString {
  return z.string().min(1, 'must be a file path').register(fileRefs, { secret: false });
}
