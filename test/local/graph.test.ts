import { dependencyOrder, selectedDependencies } from '../../src/local/graph';
import { Template } from '../../src/local/template';

describe('dependencyOrder', () => {
  test.each<[string, string[], Record<string, string[]>, string[]]>([
    ['no dependencies keeps the given order', ['a', 'b', 'c'], {}, ['a', 'b', 'c']],
    ['a dependency moves first', ['b', 'a'], { b: ['a'] }, ['a', 'b']],
    ['a chain', ['c', 'b', 'a'], { c: ['b'], b: ['a'] }, ['a', 'b', 'c']],
    ['a diamond keeps ties in the given order', ['d', 'c', 'b', 'a'], { d: ['b', 'c'], b: ['a'], c: ['a'] }, ['a', 'c', 'b', 'd']],
    ['dependencies outside the set are ignored', ['a', 'b'], { a: ['zzz'], b: ['a'] }, ['a', 'b']],
  ])('%s', (_name, ids, deps, expected) => {
    expect(dependencyOrder(ids, new Map(Object.entries(deps)))).toEqual(expected);
  });

  test('a cycle fails, naming the resources', () => {
    expect(() => dependencyOrder(['a', 'b', 'c'], new Map([['a', ['b']], ['b', ['a']]]))).toThrow(/circular dependency between a, b/);
  });
});

describe('selectedDependencies', () => {
  const t: Template = {
    Resources: {
      Role: { Type: 'AWS::IAM::Role', DependsOn: 'Sub' },
      Sub: { Type: 'Custom::DpiSubscription', Properties: {} },
      Pipe: { Type: 'Custom::DpiNotificationPipeline', Properties: { RoleArn: { 'Fn::GetAtt': ['Role', 'Arn'] } } },
      Hist: { Type: 'Custom::DpiHistoryRequest', Properties: { SubscriptionId: { 'Fn::GetAtt': ['Sub', 'SubscriptionId'] } } },
      Jobs: { Type: 'Custom::DpiProductOrderJobs', DependsOn: ['Hist', 'Role'], Properties: { S: { 'Fn::Sub': '${Pipe}' } } },
      Lonely: { Type: 'Custom::DpiSubscription', Properties: {} },
    },
  };
  const deps = selectedDependencies(t, (id) => t.Resources![id].Type.startsWith('Custom::Dpi'));

  test.each<[string, string[]]>([
    ['Sub', []],
    ['Pipe', ['Sub']],
    ['Hist', ['Sub']],
    ['Jobs', ['Hist', 'Sub', 'Pipe']],
    ['Lonely', []],
  ])('%s depends on %j (directly, through references, or through other resources)', (id, expected) => {
    expect([...deps.get(id)!].sort()).toEqual([...expected].sort());
  });

  test('only selected resources are keys', () => {
    expect([...deps.keys()].sort()).toEqual(['Hist', 'Jobs', 'Lonely', 'Pipe', 'Sub']);
  });
});
