/**
 * `scim-audit-sync simulate-okta`: the Okta org simulator (Management API + org
 * authorization server) as a long-running process, for demos, trying a config, and
 * benchmarks. It writes an SSWS API token to --token-out and a service app's private key to
 * --key-out (mode 600), and prints one JSON line once listening:
 * {"event":"listening","orgUrl","apiTokenFile","privateKeyFile","clientId"}. SIGTERM/SIGINT stop it.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { runCommand } from './exit-codes.ts';
import { commandLogger } from './options.ts';

interface SimulateOktaOptions {
  host: string;
  port: number;
  users: number;
  groups: number;
  domain: string;
  tokenOut: string;
  keyOut: string;
  adminRole: boolean;
  usersRateLimit: number;
}

function integer(min: number): (raw: string) => number {
  return (raw) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer >= ${min}`);
    return n;
  };
}

export function simulateOktaCommand(): Command {
  return new Command('simulate-okta')
    .description(
      'run the Okta org simulator (users, groups, group members, rules; SSWS tokens and a private-key service app) until SIGTERM/SIGINT',
    )
    .addOption(new Option('--host <host>', 'address to listen on').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'port (0 = any free port)').argParser(integer(0)).default(0))
    .addOption(
      new Option('--users <n>', 'generated users (every 50th suspended, every 100th deprovisioned)').argParser(integer(0)).default(100),
    )
    .addOption(
      new Option('--groups <n>', 'generated groups (every 10th an APP_GROUP), plus one rule group per department')
        .argParser(integer(0))
        .default(10),
    )
    .addOption(new Option('--domain <domain>', 'login domain').default('example.com'))
    .addOption(new Option('--token-out <file>', 'where to write the generated API token').default('okta-api-token'))
    .addOption(new Option('--key-out <file>', "where to write the service app's private key (PEM)").default('okta-service-app.pem'))
    .addOption(new Option('--no-admin-role', 'token and service app without an admin role (every API call is 403 E0000006)'))
    .addOption(
      new Option('--users-rate-limit <n>', 'GET /api/v1/users requests per minute (Okta default 600)').argParser(integer(1)).default(600),
    )
    .action(
      runCommand(async (o: SimulateOktaOptions, cmd: Command) => {
        const log = commandLogger(cmd);
        const { generateServiceApp, seedOrg, startOktaSimulator } = await import('../simulator/okta/index.ts');
        const role = o.adminRole ? 'READ_ONLY_ADMIN' : undefined;
        const app = generateServiceApp({ adminRole: role });
        const token = `00${randomBytes(30).toString('base64url')}`;
        const apiTokenFile = resolve(o.tokenOut);
        const privateKeyFile = resolve(o.keyOut);
        writeFileSync(apiTokenFile, `${token}\n`, { mode: 0o600 });
        writeFileSync(privateKeyFile, app.privateKeyPem, { mode: 0o600 });
        const sim = await startOktaSimulator({
          host: o.host,
          port: o.port,
          apiTokens: [{ token, adminRole: role }],
          serviceApps: [app.app],
          rateLimits: { users: o.usersRateLimit },
          recordRequests: false,
        });
        seedOrg(sim.org, {
          users: o.users,
          groups: o.groups,
          suspendedEvery: 50,
          deprovisionedEvery: 100,
          appGroupEvery: 10,
          rules: true,
          domain: o.domain,
        });
        process.stdout.write(
          `${JSON.stringify({ event: 'listening', orgUrl: sim.url, apiTokenFile, privateKeyFile, clientId: app.app.clientId })}\n`,
        );
        log.info({ users: sim.org.listUsers().length, groups: sim.org.listGroups().length }, 'Okta simulator listening');
        const stop = (signal: NodeJS.Signals): void => {
          log.info({ signal }, 'Okta simulator stopping');
          process.off('SIGTERM', stop);
          process.off('SIGINT', stop);
          sim.close().catch((e: unknown) => log.error({ err: e }, 'simulator close failed'));
        };
        process.on('SIGTERM', stop);
        process.on('SIGINT', stop);
      }),
    );
}
