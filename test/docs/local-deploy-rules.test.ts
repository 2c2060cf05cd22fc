import { roleTrustsService } from '../../src/local/runner';

/**
 * docs/local-deploy.md, "IAM roles": the rule for `trustsService` of the roles the runner registers, case by case as
 * the doc states it.
 */
type Role = Parameters<typeof roleTrustsService>[0];
const withTrust = (doc: unknown): Role => ({ Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: doc } }) as Role;
const statement = (s: Record<string, unknown>): Role => withTrust({ Version: '2012-10-17', Statement: [s] });

describe('trustsService of a registered role (docs/local-deploy.md)', () => {
  test.each([
    ['the service\'s account', { AWS: 'arn:aws:iam::111122223333:root' }],
    ['another account', { AWS: '444455556666' }],
    ['a role ARN', { AWS: 'arn:aws:iam::123456789012:role/someone' }],
    ['*', { AWS: '*' }],
    ['an intrinsic', { AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::111122223333:root']] } }],
    ['a list with a service principal too', { AWS: ['arn:aws:iam::111122223333:root'], Service: 'lambda.amazonaws.com' }],
  ])('an Allow statement with an AWS principal (%s): true, whatever its action and conditions', (_what, principal) => {
    expect(roleTrustsService(statement({ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: principal }))).toBe(true);
    expect(roleTrustsService(statement({
      Effect: 'Allow',
      Action: ['sts:AssumeRole', 'sts:TagSession'],
      Principal: principal,
      Condition: { StringEquals: { 'sts:ExternalId': 'ext-123' } },
    }))).toBe(true);
  });

  test('a single statement object (not a list) is read the same way', () => {
    expect(roleTrustsService(withTrust({ Statement: { Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { AWS: '111122223333' } } }))).toBe(true);
  });

  test.each([
    ['only a Service principal', statement({ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { Service: 'firehose.amazonaws.com' } })],
    ['only a Federated principal', statement({ Effect: 'Allow', Action: 'sts:AssumeRoleWithWebIdentity', Principal: { Federated: 'cognito-identity.amazonaws.com' } })],
    ['the Principal string *', statement({ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: '*' })],
    ['a Deny statement only', statement({ Effect: 'Deny', Action: 'sts:AssumeRole', Principal: { AWS: '111122223333' } })],
    ['no trust policy', { Type: 'AWS::IAM::Role', Properties: {} } as Role],
  ])('%s: false', (_what, role) => {
    expect(roleTrustsService(role)).toBe(false);
  });
});
