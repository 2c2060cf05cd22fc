/**
 * The removal policy of a Delete for adopted records: `destroy` ends an adopted record only while the declaration
 * still names the adoption (`AdoptId`); dropping `existingSubscriptionId` (a fleet's default DESTROY then applies)
 * keeps what was recorded (retain by default). Records the resource made follow the declaration.
 */
import { recordedRemovalPolicy, removalPolicyOf } from '../../src/handler/common';

describe('removalPolicyOf', () => {
  test('an adopted record is destroyed only with AdoptId and destroy together', () => {
    expect(removalPolicyOf({ RemovalPolicy: 'destroy', AdoptId: '9001' }, { adopted: true })).toBe('destroy');
    expect(removalPolicyOf({ RemovalPolicy: 'destroy' }, { adopted: true })).toBe('retain');
    // A destroy recorded while the adoption was declared stands (dpi orphans --fix sends the Delete without AdoptId).
    expect(removalPolicyOf({ RemovalPolicy: 'destroy' }, { adopted: true, removalPolicy: 'destroy' })).toBe('destroy');
    expect(removalPolicyOf({ RemovalPolicy: 'destroy' }, { adopted: true, removalPolicy: 'retain' })).toBe('retain');
    expect(removalPolicyOf({ RemovalPolicy: 'retain', AdoptId: '9001' }, { adopted: true })).toBe('retain');
    expect(removalPolicyOf({}, { adopted: true })).toBe('retain');
  });

  test('a record the resource made follows the declaration', () => {
    expect(removalPolicyOf({ RemovalPolicy: 'destroy' }, { adopted: false })).toBe('destroy');
    expect(removalPolicyOf({ RemovalPolicy: 'retain' }, undefined)).toBe('retain');
    expect(removalPolicyOf({}, undefined)).toBe('destroy');
  });

  test('a kind without an adoption property (legacy pipelines) follows the declaration', () => {
    expect(removalPolicyOf({ RemovalPolicy: 'destroy' }, { adopted: true }, false)).toBe('destroy');
  });
});

describe('recordedRemovalPolicy (what an Update records)', () => {
  test('dropping the adoption never turns an adopted record\'s retain into destroy', () => {
    expect(recordedRemovalPolicy('destroy', undefined, { adopted: true, removalPolicy: 'retain' })).toBe('retain');
    expect(recordedRemovalPolicy('destroy', undefined, { adopted: true })).toBe('retain');
  });
  test('destroy declared next to the adoption is recorded; records the resource made follow the declaration', () => {
    expect(recordedRemovalPolicy('destroy', '9001', { adopted: true, removalPolicy: 'retain' })).toBe('destroy');
    expect(recordedRemovalPolicy('destroy', undefined, { removalPolicy: 'retain' })).toBe('destroy');
    expect(recordedRemovalPolicy(undefined, undefined, { removalPolicy: 'retain' })).toBe('retain');
    expect(recordedRemovalPolicy('retain', undefined, { adopted: true, removalPolicy: 'destroy' })).toBe('retain');
  });
});
