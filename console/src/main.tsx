// The console's shell: the token bar, the principal it acts as, the navigation and the hash router over
// the four views. Invariant: the credential (a token or a JWT) is asked once and kept for the tab
// (api.ts), and only by a host that wants one; changing it re-reads who the tab acts as and re-renders
// every view so each re-reads the host with it.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { WhoAmIResponse } from "../../src/gen/harnesshost/v1/console_pb.js";
import { getToken, onTokenWanted, setToken, tokenWanted, views } from "./api.js";
import { Me, PrincipalBadge } from "./principal.js";
import { attempt } from "./ui.js";
import { useRoute } from "./ui.js";
import { HarnessesView } from "./views/harnesses.js";
import { InboxView } from "./views/inbox.js";
import { SessionView } from "./views/session.js";
import { NewSession, SessionsView } from "./views/sessions.js";
import "./style.css";

/** The token field, shown only on a host that asked for a token (or once one is set in this tab). */
function TokenBar({ onChange }: { onChange: () => void }) {
  const [value, setValue] = useState("");
  const [wanted, setWanted] = useState(tokenWanted);
  useEffect(() => onTokenWanted(() => setWanted(true)), []);
  const has = getToken() !== "";
  if (!wanted) return null;
  return (
    <form
      class="token"
      onSubmit={(e) => {
        e.preventDefault();
        setToken(value.trim());
        setValue("");
        onChange();
      }}
    >
      <span class="muted">{has ? "token set for this tab" : "this host needs a token"}</span>
      <input
        type="password"
        name="token"
        autocomplete="off"
        placeholder="token or JWT"
        value={value}
        onInput={(e) => setValue(e.currentTarget.value)}
      />
      <button type="submit">{has ? "Change" : "Set"}</button>
    </form>
  );
}

function App() {
  const route = useRoute();
  const [generation, setGeneration] = useState(0);
  const [me, setMe] = useState<WhoAmIResponse | undefined>();
  useEffect(() => {
    setMe(undefined);
    // A refusal here is what first asks for a token (api.ts); the views show their own errors.
    void attempt(
      () => views.whoAmI({}),
      () => undefined,
    ).then(setMe);
  }, [generation]);
  const [view, arg] = route;
  const body =
    view === "session" && arg ? (
      <SessionView uid={arg} />
    ) : view === "inbox" ? (
      <InboxView />
    ) : view === "harnesses" ? (
      <HarnessesView />
    ) : (
      <>
        <NewSession />
        <SessionsView />
      </>
    );
  const tab = view ?? "sessions";
  return (
    <>
      <header class="top">
        <h1>harnesshost</h1>
        <nav>
          <a href="#/sessions" class={tab === "sessions" || tab === "session" ? "active" : ""}>
            Sessions
          </a>
          <a href="#/inbox" class={tab === "inbox" ? "active" : ""}>
            Inbox
          </a>
          <a href="#/harnesses" class={tab === "harnesses" ? "active" : ""}>
            Harnesses
          </a>
        </nav>
        <PrincipalBadge me={me} />
        <TokenBar onChange={() => setGeneration(generation + 1)} />
      </header>
      <Me.Provider value={me}>
        <main key={generation}>{body}</main>
      </Me.Provider>
    </>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
