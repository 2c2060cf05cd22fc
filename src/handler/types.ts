/** The CloudFormation custom resource event (as the provider framework passes it to onEvent / isComplete). */
export interface CfnEvent {
  RequestType: 'Create' | 'Update' | 'Delete';
  ServiceToken?: string;
  ResponseURL?: string;
  StackId: string;
  RequestId: string;
  LogicalResourceId: string;
  ResourceType: string;
  ResourceProperties: Record<string, unknown>;
  OldResourceProperties?: Record<string, unknown>;
  PhysicalResourceId?: string;
  /** Present in isComplete events: the onEvent response's Data. */
  Data?: Record<string, unknown>;
}

/** What onEvent returns. */
export interface OnEventResult {
  PhysicalResourceId: string;
  Data?: Record<string, string>;
}

/** What isComplete returns. */
export interface IsCompleteResult {
  IsComplete: boolean;
  Data?: Record<string, string>;
}

/** The part of the Lambda context the handler uses. */
export interface LambdaContextLike {
  getRemainingTimeInMillis?: () => number;
}
