// Small shared pieces of the console: the error box, the router hook, formatting. Invariant: an error
// is always rendered with its code and message (ErrorBox), and a view that fails keeps showing what it
// had with the error above it rather than a blank page.
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { useEffect, useState } from "preact/hooks";
import type { ComponentChildren } from "preact";
import { type ApiError, apiError } from "./api.js";

export function ErrorBox({ error, onRetry }: { error: ApiError | undefined; onRetry?: () => void }) {
  if (error === undefined) return null;
  return (
    <div class="error" role="alert" data-testid="error">
      <span>
        <strong>{error.code}</strong>: {error.message}
        {error.auth ? " — set the bearer token above." : ""}
      </span>
      {onRetry ? (
        <button type="button" onClick={onRetry}>
          Retry
        </button>
      ) : null}
    </div>
  );
}

/** The hash route as path segments: "#/session/abc" → ["session", "abc"]. */
export function useRoute(): string[] {
  const read = (): string[] => location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = (): void => setRoute(read());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

export function go(...segments: string[]): void {
  location.hash = `#/${segments.map(encodeURIComponent).join("/")}`;
}

export function Link({ to, children, testid }: { to: string[]; children: ComponentChildren; testid?: string }) {
  return (
    <a href={`#/${to.map(encodeURIComponent).join("/")}`} data-testid={testid}>
      {children}
    </a>
  );
}

export function time(ts: Timestamp | undefined): string {
  if (ts === undefined) return "";
  const d = new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6));
  return d
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
}

/** Runs `fn`, turning any failure into an ApiError for the view's error state. */
export async function attempt<T>(fn: () => Promise<T>, onError: (e: ApiError) => void): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    onError(apiError(err));
    return undefined;
  }
}

/** Calls `fn` every `ms` while the page is visible (and once when it becomes visible again). */
export function useVisibleInterval(fn: () => void, ms: number): void {
  useEffect(() => {
    let timer: ReturnType<typeof setInterval> | undefined;
    const arm = (): void => {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      if (document.visibilityState === "visible") timer = setInterval(fn, ms);
    };
    const onVisibility = (): void => {
      if (document.visibilityState === "visible") fn();
      arm();
    };
    arm();
    document.addEventListener("visibilitychange", onVisibility);
    return () => {
      if (timer !== undefined) clearInterval(timer);
      document.removeEventListener("visibilitychange", onVisibility);
    };
  }, [fn, ms]);
}
