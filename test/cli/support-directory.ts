/** A platform simulator, a config and a JSON directory file in a temporary folder, for the CLI scenarios. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';

export interface DirUser {
  externalId: string;
  userName: string;
  displayName?: string;
  givenName?: string;
  familyName?: string;
  emails?: string[];
  active?: boolean;
}
export interface DirGroup {
  externalId: string;
  displayName: string;
  members: string[];
}

export interface Scenario {
  sim: Simulator;
  dir: string;
  configPath: string;
  /** Writes the source: a JSON file (JSON keeps every character exactly). */
  directory(users: Array<DirUser | Record<string, unknown>>, groups?: DirGroup[]): Promise<void>;
  close(): Promise<void>;
}

export async function startScenario(token: string, configLines: string[] = []): Promise<Scenario> {
  const sim = await startSimulator({ tokens: [{ token }] });
  const dir = await mkdtemp(join(tmpdir(), 'cli-scenario-'));
  const configPath = join(dir, 'config.yaml');
  await writeFile(
    configPath,
    [
      'platform:',
      `  baseUrl: ${sim.url}`,
      `  token: ${token}`,
      '  allowInsecureHttp: true',
      'state: { dir: ./state }',
      'provisioning:',
      '  source: { type: file, path: directory.json }',
      ...configLines,
      '',
    ].join('\n'),
  );
  return {
    sim,
    dir,
    configPath,
    directory: (users, groups = []) => writeFile(join(dir, 'directory.json'), JSON.stringify({ users, groups })),
    close: async () => {
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
