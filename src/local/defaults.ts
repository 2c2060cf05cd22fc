/** Defaults of `dpi local-deploy` (a light module: the command line loads the runner only when it runs). */

/** Default state file. */
export const DEFAULT_STATE_FILE = '.dpi/local-state.json';
/** Default environment variable holding the refresh token. */
export const DEFAULT_REFRESH_TOKEN_ENV = 'DPI_REFRESH_TOKEN';
