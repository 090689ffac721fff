/** The chat box: the log (public, private, trade and system lines, refusals in their own colour) and the input. */
import type { ChatLine } from "../state/store.js";
import { byId, h, type Ui } from "./context.js";

let shown: ChatLine[] = [];

/** Appends the lines the log does not show yet. */
export function renderChat(lines: ChatLine[]): void {
  if (lines === shown) return;
  const log = byId("chat-log");
  const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  const fresh = lines.filter((l) => !shown.includes(l));
  shown = lines;
  for (const l of fresh) {
    const cls = l.code ? "refusal" : l.kind;
    const who = l.kind === "system" ? "" : l.from ? `${l.from}: ` : "";
    log.append(h("div", { class: `line ${cls}`, ...(l.code ? { "data-code": l.code } : {}) }, who + l.text));
  }
  while (log.childElementCount > 200) log.firstElementChild?.remove();
  if (atBottom) log.scrollTop = log.scrollHeight;
}

/** Enter focuses the input; Enter in it sends (to the chosen friend when one is picked). */
export function bindChat(u: Ui): void {
  const input = byId<HTMLInputElement>("chat-input");
  const to = byId<HTMLSelectElement>("chat-to");
  byId("chat-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (text) u.session.send("player:chat", to.value ? { text, to: to.value } : { text });
    input.value = "";
    input.blur();
  });
}
