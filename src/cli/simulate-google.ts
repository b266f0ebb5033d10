/**
 * `scim-audit-sync simulate-google`: the Google Workspace (Directory API) simulator as a
 * long-running process, for demos, trying a config, and benchmarks. It generates a
 * service-account key, writes it to --key-out (mode 600) with delegation granted for the
 * read-only scopes, and prints one JSON line once listening:
 * {"event":"listening","rootUrl","tokenUrl","keyFile","subject"}. SIGTERM/SIGINT stop it.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { GoogleFaultRule } from '../simulator/google/types.ts';
import { runCommand } from './exit-codes.ts';
import { commandLogger } from './options.ts';

interface SimulateGoogleOptions {
  host: string;
  port: number;
  users: number;
  groups: number;
  domain: string;
  keyOut: string;
  delegation: boolean;
  rateLimitEvery: number;
}

function integer(min: number): (raw: string) => number {
  return (raw) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer >= ${min}`);
    return n;
  };
}

export function simulateGoogleCommand(): Command {
  return new Command('simulate-google')
    .description('run the Google Workspace Directory API simulator (OAuth token endpoint + users/groups/members) until SIGTERM/SIGINT')
    .addOption(new Option('--host <host>', 'address to listen on').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'port (0 = any free port)').argParser(integer(0)).default(0))
    .addOption(new Option('--users <n>', 'generated users (plus admin@<domain>, the subject)').argParser(integer(0)).default(100))
    .addOption(new Option('--groups <n>', 'generated groups (with nesting and a cycle from 5 groups up)').argParser(integer(0)).default(10))
    .addOption(new Option('--domain <domain>', 'primary domain').default('example.com'))
    .addOption(
      new Option('--key-out <file>', 'where to write the generated service-account JSON key').default('google-service-account.json'),
    )
    .addOption(new Option('--no-delegation', 'do not grant domain-wide delegation (token requests fail with unauthorized_client)'))
    .addOption(
      new Option('--rate-limit-every <n>', 'answer every Nth Directory API request 403 userRateLimitExceeded (0 = never)')
        .argParser(integer(0))
        .default(0),
    )
    .action(
      runCommand(async (o: SimulateGoogleOptions, cmd: Command) => {
        const log = commandLogger(cmd);
        const { generateServiceAccount, seedWorkspace, startGoogleSimulator } = await import('../simulator/google/index.ts');
        const { SCOPES } = await import('../sources/google/schema.ts');
        const sa = generateServiceAccount(o.delegation ? { delegatedScopes: Object.values(SCOPES) } : {});
        const keyFile = resolve(o.keyOut);
        writeFileSync(keyFile, sa.keyFileJson, { mode: 0o600 });
        const faults: GoogleFaultRule[] = o.rateLimitEvery > 0 ? [{ kind: 'user-rate-limit-403', every: o.rateLimitEvery }] : [];
        const sim = await startGoogleSimulator({
          host: o.host,
          port: o.port,
          domain: o.domain,
          serviceAccounts: [sa.account],
          faults,
          recordRequests: false,
          onRequest: (e) => log.debug({ method: e.method, path: e.path, status: e.status, fault: e.fault }, 'request'),
        });
        const { adminEmail } = seedWorkspace(sim.workspace, { users: o.users, groups: o.groups });
        process.stdout.write(
          `${JSON.stringify({ event: 'listening', url: sim.url, rootUrl: sim.rootUrl, tokenUrl: sim.tokenUrl, keyFile, subject: adminEmail })}\n`,
        );
        log.info({ users: sim.workspace.counts().users, groups: sim.workspace.counts().groups }, 'Google simulator listening');
        const stop = (signal: NodeJS.Signals): void => {
          log.info({ signal }, 'Google simulator stopping');
          process.off('SIGTERM', stop);
          process.off('SIGINT', stop);
          sim.close().catch((e: unknown) => log.error({ err: e }, 'simulator close failed'));
        };
        process.on('SIGTERM', stop);
        process.on('SIGINT', stop);
      }),
    );
}
