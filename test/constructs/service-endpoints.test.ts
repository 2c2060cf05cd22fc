import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { roles, SECRET_ARN } from './helpers';
import { AccountType, NotificationPipeline, NotificationType, ServiceConnection, ServiceConnectionProps, ServiceEndpoints } from '../../src';

const URLS = {
  baseUrl: 'https://api.example-dpi.com',
  subscriptionsUrl: 'https://subscriptions.example-dpi.com',
  accountUrl: 'https://account.example-dpi.com',
  userUrl: 'https://user.example-dpi.com',
  remoteIdentityUrl: 'https://remote-identity.example-dpi.com',
  authUrl: 'https://authentication.example-dpi.com',
};

/** The pipeline's `Connection` property (what the handler gets) for a connection made from `props`. */
function wire(props: Omit<ServiceConnectionProps, 'refreshToken' | 'journalTableName'>): unknown {
  const stack = new Stack(new App(), 'S', { env: { account: '123456789012', region: 'us-east-1' } });
  const connection = new ServiceConnection(stack, 'Dpi', {
    ...props,
    refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, 'Token', SECRET_ARN),
    journalTableName: 'dpi-lifecycle-journal',
  });
  new NotificationPipeline(stack, 'P', {
    connection, roles: roles(stack), remoteIdentityId: 362, accountType: AccountType.SELLER, notificationTypes: [NotificationType.ORDER_CHANGE],
  });
  const resources = Template.fromStack(stack).findResources('Custom::DpiNotificationPipeline');
  return Object.values(resources)[0].Properties.Connection;
}

describe('ServiceEndpoints', () => {
  test('of(): the six URLs reach the handler exactly as the deprecated six props did', () => {
    const fromEndpoints = wire({ endpoints: ServiceEndpoints.of(URLS) });
    expect(fromEndpoints).toMatchObject({
      BaseUrl: URLS.baseUrl,
      SubscriptionsUrl: URLS.subscriptionsUrl,
      AccountUrl: URLS.accountUrl,
      UserUrl: URLS.userUrl,
      RemoteIdentityUrl: URLS.remoteIdentityUrl,
      AuthUrl: URLS.authUrl,
    });
    expect(fromEndpoints).toEqual(wire({ ...URLS }));
  });

  test('singleOrigin(): one URL for every part, as singleOriginUrl did', () => {
    const u = 'http://127.0.0.1:4010';
    const fromEndpoints = wire({ endpoints: ServiceEndpoints.singleOrigin(u) });
    expect(fromEndpoints).toMatchObject({ BaseUrl: u, SubscriptionsUrl: u, AccountUrl: u, UserUrl: u, RemoteIdentityUrl: u, AuthUrl: u });
    expect(fromEndpoints).toEqual(wire({ singleOriginUrl: u }));
  });

  test('the connection exposes the URLs and the endpoints object its kind', () => {
    expect(ServiceEndpoints.singleOrigin('https://proxy.example.com').isSingleOrigin).toBe(true);
    expect(ServiceEndpoints.of(URLS).isSingleOrigin).toBe(false);
    expect(ServiceEndpoints.of(URLS).urls.authUrl).toBe(URLS.authUrl);
  });
});
