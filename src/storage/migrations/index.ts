/** The committed migrations, in order. Listed explicitly so start-up needs no file discovery. */
import { Migration20261122010855 } from "./Migration20261122010855.js";
import { Migration20261124140000 } from "./Migration20261124140000.js";
import { Migration20261126190227 } from "./Migration20261126190227.js";
import { Migration20261127210000 } from "./Migration20261127210000.js";
import { Migration20261127220000 } from "./Migration20261127220000.js";
import { Migration20261127230000 } from "./Migration20261127230000.js";

export const MIGRATIONS = [
  { name: "Migration20261122010855", class: Migration20261122010855 },
  { name: "Migration20261124140000", class: Migration20261124140000 },
  { name: "Migration20261126190227", class: Migration20261126190227 },
  { name: "Migration20261127210000", class: Migration20261127210000 },
  { name: "Migration20261127220000", class: Migration20261127220000 },
  { name: "Migration20261127230000", class: Migration20261127230000 },
];
