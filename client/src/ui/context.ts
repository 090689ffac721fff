/** What every UI module shares: the store, the connection, the content, the REST client and the UI's own choices. */
import type { Content } from "../content.js";
import type { Api } from "../net/api.js";
import type { Session } from "../net/session.js";
import type { Store } from "../state/store.js";

export interface UiState {
  /** The inventory slot picked with "Use", to use on another slot, a fire or a station. */
  selectedSlot?: number;
  /** The store whose panel is open. */
  storeId?: string;
  tab: string;
}

export interface Ui {
  store: Store;
  session: Session;
  content: Content;
  api: Api;
  ui: UiState;
  /** Re-render the panels after a change of `ui`. */
  refresh(): void;
  showTab(tab: string): void;
}

/** `document.getElementById` that fails loudly when the page lacks the element. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} missing`);
  return el as T;
}

/** An element with text, attributes and children. */
export function h(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...children);
  return el;
}

/** A button that runs `onClick`. */
export function button(text: string, onClick: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  const b = h("button", { type: "button", ...attrs }, text) as HTMLButtonElement;
  b.addEventListener("click", onClick);
  return b;
}
