/**
 * Which Delete waits for a cancelled Create (src/handler/lease.ts): only one whose physical ID is the kind
 * CloudFormation invents, `<stack>-<logicalId>-<suffix>`; never one naming a service record of any kind.
 */
import { inventedDelete } from '../../src/handler/lease';
import type { CfnEvent } from '../../src/handler/types';

const STACK_ID = 'arn:aws:cloudformation:us-east-1:123456789012:stack/Fleet-SellersNestedStack1-1ABCDEFGH/0a1b2c3d';
const del = (PhysicalResourceId: string, RequestType: CfnEvent['RequestType'] = 'Delete'): CfnEvent =>
  ({ RequestType, StackId: STACK_ID, LogicalResourceId: 'Identity2001Pipeline', RequestId: 'r-1', PhysicalResourceId, ResourceProperties: {} }) as unknown as CfnEvent;

test.each([
  ['Fleet-SellersNestedStack1-1ABCDEFGH-Identity2001Pipeline-1A2B3C4D5E6F', true],
  ['Fleet-SellersNes-Identity2001Pip-ZX12CV34BN56', true],
  ['9001', false],
  ['j-4', false],
  ['h-12', false],
  ['r-1', false],
  ['Other-Identity2001Pipeline-1A2B3C4D5E6F', false],
  ['arn:aws:lambda:us-east-1:123456789012:function:x', false],
])('%s: invented %s', (id, invented) => {
  expect(inventedDelete(del(id))).toBe(invented);
});

test('only a Delete waits', () => {
  expect(inventedDelete(del('Fleet-SellersNestedStack1-1ABCDEFGH-Identity2001Pipeline-1A2B3C4D5E6F', 'Update'))).toBe(false);
});
