/**
 * AWS failures of the journal reads of `dpi journal`, `dpi orphans` (and, through the same `openJournal`, `dpi drift`)
 * are said for the person running the CLI: what to check (credentials, --profile, --region, --endpoint, --local),
 * never "the provider role" (the journal's advice to the deploy). Server-side errors (an expired or unrecognized
 * token) come from the real AWS SDK and the real journal against a fake DynamoDB endpoint that answers them;
 * client-side ones (no credentials, no region) from a fake journal that fails the way the real one does.
 */
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { fakeCloudFormation } from './fake-cloudformation';
import { dpi, DpiRun, testNoSecretsPrinted } from './helpers';
import { journalSeams } from '../../src/cli/commands/journal-access';
import { orphansSeams } from '../../src/cli/commands/orphans';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';
import { dynamoJournal, Journal, JournalOptions } from '../../src/handler/journal';

jest.setTimeout(60_000);

const KEY = 'MarketplaceData/SellerNotifications8C79AC32';
const make = journalSeams.make;
/** A service address (never called: the journal fails first) and the token (never printed). */
const env = { DPI_BASE_URL: 'http://127.0.0.1:9', DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN };

/** What the journal the seam made was asked for (its options). */
let asked: JournalOptions[] = [];

/** The commands set AWS_REGION / AWS_PROFILE from --region / --profile for the SDK: restored after each test. */
const savedEnv = { AWS_REGION: process.env.AWS_REGION, AWS_PROFILE: process.env.AWS_PROFILE };
beforeEach(() => {
  delete process.env.AWS_REGION;
});
afterEach(() => {
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  journalSeams.make = make;
  orphansSeams.cloudFormation = undefined;
  asked = [];
});

/** A journal whose every call fails as the handler's journal reports an SDK error (`<name>: <message>` + its advice). */
function failingJournal(error: Error): (opts: JournalOptions) => Journal {
  return (opts) => {
    asked.push(opts);
    const fail = async (): Promise<never> => {
      // The wrapping of src/handler/journal.ts (journalError), which names the error and advises the provider role.
      const e = new Error(`the lifecycle journal (DynamoDB table ${opts.table}) failed: ${error.name}: ${error.message}; check that the provider `
        + 'role may use the table, then deploy again');
      e.name = 'HandlerError';
      throw e;
    };
    return {
      records: fail,
      create: fail,
      save: fail,
      claim: fail,
      owners: fail,
      transfer: fail,
      lock: fail,
      unlock: fail,
      fact: fail,
      setFact: fail,
      dropFact: fail,
      scan: fail,
    };
  };
}

/** The commands that read the journal table of the account and region (no --local, no --endpoint). */
const COMMANDS: Array<[string, (region?: string) => Promise<DpiRun>]> = [
  ['dpi journal show', (region) => dpi(['journal', 'show', KEY, ...(region ? ['--region', region] : [])], { env })],
  ['dpi journal list', (region) => dpi(['journal', 'list', ...(region ? ['--region', region] : [])], { env })],
  ['dpi journal resolve', (region) => dpi(['journal', 'resolve', KEY, ...(region ? ['--region', region] : [])], { env })],
  ['dpi orphans', (region) => {
    orphansSeams.cloudFormation = fakeCloudFormation([]);
    return dpi(['orphans', ...(region ? ['--region', region] : [])], { env });
  }],
];

const sdkError = (name: string, message: string): Error => Object.assign(new Error(message), { name });

describe.each(COMMANDS)('%s', (command, run) => {
  test('without AWS credentials (CredentialsProviderError): the credential chain, --profile, --local / --endpoint', async () => {
    journalSeams.make = failingJournal(sdkError('CredentialsProviderError', 'Could not load credentials from any providers'));
    const r = await run('us-east-1');
    expect(asked.length).toBeGreaterThan(0);
    expect(asked[0].endpoint).toBeUndefined();
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`dpi: ${command} has no AWS credentials to read the lifecycle journal (DynamoDB table dpi-lifecycle-journal (us-east-1)): `
      + 'the AWS SDK\'s credential chain found none (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE or --profile, an SSO session, or an '
      + 'instance or container role); set them (and --region), or: --local (the dpi local-deploy journal) and --endpoint URL (a DynamoDB-compatible '
      + 'journal) need no AWS credentials\n');
  });

  test('without a region (the SDK\'s "Region is missing"): --region / AWS_REGION', async () => {
    journalSeams.make = failingJournal(sdkError('Error', 'Region is missing'));
    const r = await run();
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`dpi: ${command} has no AWS region to read the lifecycle journal (DynamoDB table dpi-lifecycle-journal): pass --region `
      + 'or set AWS_REGION (or a profile with a region)');
    expect(r.stderr).not.toContain('provider role');
  });

  test('an unknown region (its endpoint does not resolve): check --region', async () => {
    journalSeams.make = failingJournal(sdkError('Error', 'getaddrinfo ENOTFOUND dynamodb.xx-nowhere-1.amazonaws.com'));
    const r = await run('xx-nowhere-1');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`dpi: ${command} cannot reach AWS to read the lifecycle journal (DynamoDB table dpi-lifecycle-journal (xx-nowhere-1)) `
      + '(dynamodb.xx-nowhere-1.amazonaws.com is not found): check --region (\'xx-nowhere-1\': is it an AWS region, the one of the table?)');
    expect(r.stderr).not.toContain('provider role');
  });
});

/** A DynamoDB endpoint that answers every call with one AWS error (JSON protocol). */
async function failingDynamo(type: string, message: string): Promise<{ url: string; server: Server; calls: () => number }> {
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls++;
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-errortype': `${type}:` });
      res.end(JSON.stringify({ __type: `com.amazon.coral.service#${type}`, message }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, calls: () => calls };
}

describe.each([
  ['ExpiredTokenException', 'The security token included in the request is expired'],
  ['UnrecognizedClientException', 'The security token included in the request is invalid.'],
])('the real SDK and journal answered %s', (type, message) => {
  test.each(COMMANDS)('%s: the credentials were rejected: refresh them or --profile, check --region', async (command, run) => {
    const ddb = await failingDynamo(type, message);
    try {
      // The table of the account and region (no --endpoint), whose calls reach the fake endpoint.
      journalSeams.make = (opts) => dynamoJournal({ ...opts, endpoint: ddb.url });
      const r = await run('us-east-1');
      expect(ddb.calls()).toBeGreaterThan(0);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`dpi: the AWS credentials of ${command} were rejected while reading the lifecycle journal (DynamoDB table `
        + `dpi-lifecycle-journal (us-east-1)) (the lifecycle journal (DynamoDB table dpi-lifecycle-journal) failed: ${type}: ${message}): refresh them `
        + '(e.g. aws sso login) or choose others with --profile, and check --region (\'us-east-1\': a region your account has enabled?)');
      expect(r.stderr).not.toContain('provider role');
    } finally {
      await new Promise((resolve) => ddb.server.close(resolve));
    }
  });
});

test('--endpoint: a journal endpoint that fails is named, not the provider role', async () => {
  const ddb = await failingDynamo('InternalServerError', 'boom');
  try {
    const r = await dpi(['journal', 'show', KEY, '--endpoint', ddb.url], { env: {} });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`dpi journal show could not read the lifecycle journal (table dpi-lifecycle-journal at ${ddb.url}): check that `
      + `--endpoint ${ddb.url} is a running DynamoDB-compatible endpoint`);
    expect(r.stderr).not.toContain('provider role');
  } finally {
    await new Promise((resolve) => ddb.server.close(resolve));
  }
});

testNoSecretsPrinted();
