/** Shared setup for the user-attribute scenario tests: a directory with attribute-bearing people and the config that maps them. */
import type { Simulator } from '../../../src/simulator/index.ts';
import { person, type ConfigPatch, type DirUser } from '../../helpers/reconcile-harness.ts';

export const ATTRS_PATH = '/api/v1/user-attributes';
export const VALUES_PATH = '/api/v1/user-attribute-values';

/** Configured attributes: one of each type, with the value sources the issue names. */
export function attributeConfig(extra: ConfigPatch = {}, guards: ConfigPatch = {}): ConfigPatch {
  return {
    provisioning: {
      userAttributes: [
        { name: 'region', type: 'string', from: 'attributes.l', transform: 'upper' },
        { name: 'department', type: 'string', from: 'attributes.department', whenMissing: 'keep' },
        { name: 'costCentre', type: 'number', from: 'attributes.costCentre', accessRelevant: false },
        { name: 'clearance', type: 'boolean', from: 'attributes.clearance' },
        { name: 'customers', type: 'string_array', from: 'attributes.customers', split: ';' },
      ],
      // The scenarios use small directories: the percentage limits would trip on one change.
      guards: { maxDeletePercent: 100, maxAttributeClearPercent: 100, ...guards },
      ...extra,
    },
  };
}

export function staff(n: number, attributes: Record<string, unknown>, extra: Partial<DirUser> = {}): DirUser {
  return person(n, { attributes, ...extra });
}

export function userId(sim: Simulator, userName: string): string {
  const u = sim.store.getUserByUserName(userName);
  if (!u) throw new Error(`no platform user ${userName}`);
  return u.id;
}

export function valuesOf(sim: Simulator, userName: string): Record<string, unknown> {
  return sim.attributes.valuesOf(userId(sim, userName));
}

export function attributeWrites(sim: Simulator): Array<{ method: string; path: string; body?: unknown }> {
  return sim.requests
    .filter((r) => r.method !== 'GET' && (r.path.startsWith(ATTRS_PATH) || r.path.startsWith(VALUES_PATH)))
    .map((r) => ({ method: r.method, path: r.path, body: r.body }));
}

export function valueReads(sim: Simulator): number {
  return sim.requests.filter((r) => r.method === 'GET' && r.path.startsWith(`${VALUES_PATH}/`)).length;
}
