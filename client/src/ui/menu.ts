/** The right-click menu (and the menu of a left click that has several equal choices). */
import { byId, h } from "./context.js";

export interface MenuItem {
  label: string;
  run: () => void;
}

/** Opens the menu at page coordinates; a click anywhere else or Escape closes it. */
export function openMenu(x: number, y: number, items: MenuItem[]): void {
  const menu = byId<HTMLUListElement>("menu");
  menu.replaceChildren(
    ...items.map((it) => {
      const li = h("li", { role: "menuitem" }, it.label);
      li.addEventListener("click", (e) => {
        e.stopPropagation();
        closeMenu();
        it.run();
      });
      return li;
    }),
  );
  menu.style.left = `${x}px`;
  menu.style.top = `${y}px`;
  menu.hidden = items.length === 0;
}

export function closeMenu(): void {
  byId("menu").hidden = true;
}
