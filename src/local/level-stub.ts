/**
 * Stands in for the `level` package in the vendor bundle (assets/local/vendor, built by .projenrc.ts with
 * `--alias:level=./src/local/level-stub.ts`). dynalite requires `level` (LevelDB on disk, through native bindings that
 * cannot be bundled) when it loads, but uses it only for a server started with a `path`; the journal server
 * (journal-server.ts) always starts dynalite with its memory backend (`memory-level`), so LevelDB is left out of the
 * package.
 */

/** The error a use of the stand-in throws. */
export function levelUnavailable(location: unknown): Error {
  return new Error(`LevelDB on disk (${String(location)}) is not part of data-pipeline-integration-cdk: its bundled dynalite `
    + 'keeps the journal tables in memory only (the journal server saves them to its JSON state file); start dynalite without a path');
}

/** dynalite's `new Level(path, options)`: always throws (see the module comment). */
export class Level {
  constructor(location?: unknown) {
    throw levelUnavailable(location);
  }
}
