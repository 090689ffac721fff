/**
 * The reference web client (docs/client.md): log in over REST, pick a character, join the world
 * through the Colyseus SDK, draw it with PixiJS and play it with mouse and keyboard.
 */
import { loadContent, type Content } from "./content.js";
import { Api, ApiFailure } from "./net/api.js";
import { Session } from "./net/session.js";
import { optionsAt } from "./state/intent.js";
import { expire, self, Store, type GameState } from "./state/store.js";
import { Scene } from "./render/scene.js";
import { perform, walk } from "./ui/actions.js";
import { bindChat, renderChat } from "./ui/chat.js";
import { button, byId, h, type Ui } from "./ui/context.js";
import { closeMenu, openMenu } from "./ui/menu.js";
import { loadFriends, renderPanels } from "./ui/panels.js";
import { renderTrade } from "./ui/trade.js";

const origin = window.location.origin;
const api = new Api(origin);
const store = new Store();

function showError(e: unknown): void {
  byId("login-error").textContent = e instanceof ApiFailure ? `${e.message} (${e.code})` : e instanceof Error ? e.message : String(e);
}

async function chooseCharacter(content: Promise<Content>): Promise<void> {
  byId("login-step").hidden = true;
  byId("character-step").hidden = false;
  const [chars, templates] = await Promise.all([api.characters(), api.templates().catch(() => [])]);
  const select = byId<HTMLSelectElement>("character-template");
  select.replaceChildren(new Option("No template", ""), ...templates.map((t) => new Option(t.name ?? t.id, t.id)));
  byId("character-list").replaceChildren(
    ...chars.map((c) =>
      h(
        "li",
        {},
        button(`Play ${c.name} (level ${c.combatLevel})`, () => void play(c.id, content), { "data-character": c.name }),
      ),
    ),
  );
  if (chars.length === 0) byId("character-list").append(h("li", {}, "No character yet: create one (a name, or leave it empty for a generated one)."));
}

async function play(characterId: string, contentP: Promise<Content>): Promise<void> {
  try {
    const content = await contentP;
    const session = new Session(`${origin}/ws`, store);
    await session.join(api.token, characterId);
    byId("login").hidden = true;
    byId("game").hidden = false;
    await startGame(content, session);
  } catch (e) {
    showError(e);
  }
}

async function startGame(content: Content, session: Session): Promise<void> {
  const scene = new Scene(content);
  await scene.mount(byId("view"));
  const u: Ui = {
    store,
    session,
    content,
    api,
    ui: { tab: "equipment" },
    refresh: () => renderAll(store.state, true),
    showTab: (tab) => {
      u.ui.tab = tab;
      for (const b of document.querySelectorAll<HTMLButtonElement>("#tabs button")) b.classList.toggle("active", b.dataset.tab === tab);
      for (const s of document.querySelectorAll<HTMLElement>(".tab")) s.hidden = s.id !== `tab-${tab}`;
      if (tab === "friends") void loadFriends(u);
      renderAll(store.state, true);
    },
  };
  // The panels are rebuilt only when what they show changed (a rebuild every tick would lose what
  // the player is typing into them).
  let shown: Partial<Pick<GameState, "me" | "trade">> = {};
  const renderAll = (s: GameState, force = false) => {
    scene.stepMs = session.tickMs;
    scene.sync(s);
    if (force || s.me !== shown.me || s.trade !== shown.trade) renderPanels(u);
    if (force || s.trade !== shown.trade) renderTrade(u);
    shown = { me: s.me, trade: s.trade };
    renderChat(s.chat);
    renderHud(s, content);
  };
  store.subscribe(renderAll);
  renderAll(store.state);
  u.showTab("equipment");
  for (const b of document.querySelectorAll<HTMLButtonElement>("#tabs button")) b.addEventListener("click", () => u.showTab(b.dataset.tab ?? "equipment"));
  bindChat(u);
  bindInput(u, scene);
  setInterval(() => store.update((s) => expire(s, performance.now())), 250);
  // Read-only hooks for the browser tests and for debugging: where a tile is on screen, what the client holds.
  (window as unknown as { realm: unknown }).realm = {
    screenOf: (x: number, z: number) => {
      const p = scene.screenOf({ x, z });
      const r = scene.app.canvas.getBoundingClientRect();
      return { x: r.left + p.x, y: r.top + p.y };
    },
    state: () => store.state,
    blocked: (x: number, z: number) => content.blocked.has(`${x},${z}`),
  };
}

function renderHud(s: GameState, content: Content): void {
  const me = s.me;
  const pub = self(s);
  if (me) {
    const area = pub ? content.areaAt(pub.x, pub.z) : undefined;
    byId("hud").textContent =
      `${me.name} · HP ${pub?.health ?? me.health}/${pub?.maxHealth ?? me.maxHealth} · combat ${me.combatLevel}${pub ? ` · (${pub.x}, ${pub.z})` : ""}${area ? ` · ${area.name}${area.pvp ? " (PvP)" : ""}` : ""}${pub?.activity === "dead" ? " · DEAD" : ""}`;
  }
  const banner = byId("banner");
  banner.hidden = !s.banner;
  banner.textContent = s.banner ?? "";
  byId("toasts").replaceChildren(...s.toasts.map((t) => h("div", { class: "toast" }, t.text)));
}

const KEY_STEPS: Record<string, [number, number]> = {
  ArrowUp: [0, 1],
  ArrowDown: [0, -1],
  ArrowLeft: [-1, 0],
  ArrowRight: [1, 0],
  w: [0, 1],
  s: [0, -1],
  a: [-1, 0],
  d: [1, 0],
};
const KEY_TABS: Record<string, string> = { e: "equipment", k: "skills", b: "bank", f: "friends" };

function bindInput(u: Ui, scene: Scene): void {
  const canvas = scene.app.canvas;
  const tileOf = (e: MouseEvent) => {
    const r = canvas.getBoundingClientRect();
    return scene.tileAt(e.clientX - r.left, e.clientY - r.top);
  };
  canvas.addEventListener("click", (e) => {
    closeMenu();
    const options = optionsAt(tileOf(e), u.store.state, u.content, u.ui.selectedSlot);
    // Players get a menu (trade, message, friend…); anything else does its first option.
    if (options[0]?.intent.kind === "trade")
      return openMenu(
        e.clientX,
        e.clientY,
        options.map((o) => ({ label: o.label, run: () => perform(u, o.intent) })),
      );
    if (options[0]) perform(u, options[0].intent);
  });
  canvas.addEventListener("contextmenu", (e) => {
    e.preventDefault();
    const options = optionsAt(tileOf(e), u.store.state, u.content, u.ui.selectedSlot);
    openMenu(
      e.clientX,
      e.clientY,
      options.map((o) => ({ label: o.label, run: () => perform(u, o.intent) })),
    );
  });
  window.addEventListener("keydown", (e) => {
    if (document.activeElement instanceof HTMLInputElement || document.activeElement instanceof HTMLSelectElement) {
      if (e.key === "Escape") (document.activeElement as HTMLElement).blur();
      return;
    }
    if (e.key === "Enter") {
      e.preventDefault();
      byId("chat-input").focus();
      return;
    }
    if (e.key === "Escape") {
      closeMenu();
      u.ui.selectedSlot = undefined;
      return u.refresh();
    }
    const step = KEY_STEPS[e.key] ?? KEY_STEPS[e.key.toLowerCase()];
    const me = self(u.store.state);
    if (step && me) {
      e.preventDefault();
      const from = u.store.state.destination ?? me;
      return walk(u, from.x + step[0], from.z + step[1], e.shiftKey);
    }
    const tab = KEY_TABS[e.key.toLowerCase()];
    if (tab) u.showTab(tab);
  });
}

function main(): void {
  const content = loadContent(origin);
  content.catch(showError);
  const go = (login: () => Promise<void>) => () =>
    void login()
      .then(() => chooseCharacter(content))
      .catch(showError);
  byId("login-guest").addEventListener(
    "click",
    go(() => api.anonymous(byId<HTMLInputElement>("login-name").value.trim() || undefined)),
  );
  byId("login-token-go").addEventListener(
    "click",
    go(() => api.useToken(byId<HTMLInputElement>("login-token").value.trim())),
  );
  byId("character-create").addEventListener("submit", (e) => {
    e.preventDefault();
    const name = byId<HTMLInputElement>("character-name").value.trim();
    const template = byId<HTMLSelectElement>("character-template").value;
    void api
      .createCharacter(name, template)
      .then((c) => play(c.id, content))
      .catch(showError);
  });
}

main();
