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
  /**
   * The resource's physical ID, when it differs from onEvent's answer (an event that continued: its Create learns the
   * service's ID only now). The provider framework answers CloudFormation with the isComplete event and this answer merged.
   */
  PhysicalResourceId?: string;
  Data?: Record<string, string>;
}

/** The part of the Lambda context the handler uses. */
export interface LambdaContextLike {
  getRemainingTimeInMillis?: () => number;
}
