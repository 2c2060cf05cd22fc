/**
 * The pure part of the resource kinds (bundled into the Lambda): the definition types and the registry's list of
 * kinds with their wire properties (src/kinds/registry/kinds.ts). Each kind's construct, handler, drift check, plan,
 * repair and orphans hooks are in its folder (src/kinds/<kind>/); the per-layer lists of the registry
 * (src/kinds/registry/) name them.
 */
export * from './types';
export * from './registry/kinds';
