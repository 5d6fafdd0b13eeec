// Session annotations the host derives when it serves a session (output only, never stored). Kept
// in a module of their own so clients and the CLI read them without loading the server.

/** The annotation GetSession derives from this host's effect counters for the session (JSON). */
export const EFFECTS_ANNOTATION = "harnesshost.dev/effects";
