/**
 * JSON text written field by field into one buffer kept between uses, for the batched progress
 * save's rows (docs/persistence.md "Batched saves"): a statement's 250 rows become one string, the
 * statement's parameter, with nothing made per row but the text of values that are objects (a goal)
 * or fractional numbers. Its values read as `JSON.stringify`'s would: whole numbers as digits, other
 * finite numbers as `String` gives them, `NaN` and infinities as `null`, strings escaped as
 * `JSON.stringify` escapes them, objects (a goal, a `Date`) through `JSON.stringify` itself, and a
 * field whose value has no JSON (`undefined`, a function, a symbol) left out.
 *
 * One writer serves one text at a time, synchronously (`begin` … `text`): nothing may yield between.
 */

const QUOTE = 0x22;
const COMMA = 0x2c;
const BACKSLASH = 0x5c;

/** A field's name as JSON (`"name"` and its colon), encoded once. */
export type JsonKey = Uint8Array;

export function jsonKey(name: string): JsonKey {
  return Buffer.from(`${JSON.stringify(name)}:`, "utf8");
}

export class JsonText {
  private buf = Buffer.allocUnsafe(64 * 1024);
  private n = 0;
  /** Only ASCII written so far: the text is read back as latin1 (the same characters, decoded faster). */
  private ascii = true;
  /** Fields written in the current object (none yet: no comma before the next). */
  private fields = 0;

  /** Start a new text (what was written before is dropped). */
  begin(): void {
    this.n = 0;
    this.ascii = true;
    this.fields = 0;
  }

  /** The text written since `begin`. */
  text(): string {
    return this.buf.toString(this.ascii ? "latin1" : "utf8", 0, this.n);
  }

  /** `[`, `]`, `,` between array items, `{`, `}`. */
  punct(c: "[" | "]" | "," | "{" | "}"): void {
    this.room(1);
    this.buf[this.n++] = c.charCodeAt(0);
    if (c === "{") this.fields = 0;
  }

  /**
   * A field of the current object: `key` and `v`, after a comma unless it is the object's first.
   * `memo` holds the JSON of the object value last written for this key (the batch's `Date`,
   * written once per batch, not once per row); give a fresh one per text.
   */
  field(key: JsonKey, v: unknown, memo?: { value: unknown; text: string }): void {
    switch (typeof v) {
      case "number":
        this.key(key);
        this.number(v);
        return;
      case "string":
        this.key(key);
        this.string(v);
        return;
      case "boolean":
        this.key(key);
        this.ascii7(v ? "true" : "false");
        return;
      case "undefined":
      case "function":
      case "symbol":
        return; // no JSON: the field is left out
      default: {
        if (v === null) {
          this.key(key);
          this.ascii7("null");
          return;
        }
        // An object (a goal, a Date), or a bigint (which JSON.stringify refuses, as before).
        let json: string | undefined;
        if (memo && memo.value === v) json = memo.text;
        else {
          json = JSON.stringify(v) as string | undefined;
          if (memo && json !== undefined) {
            memo.value = v;
            memo.text = json;
          }
        }
        if (json === undefined) return; // a toJSON that gives nothing: left out
        this.key(key);
        this.raw(json);
      }
    }
  }

  private key(key: JsonKey): void {
    this.room(key.length + 1);
    if (this.fields++ > 0) this.buf[this.n++] = COMMA;
    this.buf.set(key, this.n);
    this.n += key.length;
  }

  private number(v: number): void {
    if (!Number.isSafeInteger(v)) return this.ascii7(Number.isFinite(v) ? String(v) : "null");
    this.room(17); // a sign and 16 digits at most
    const buf = this.buf;
    let n = this.n;
    if (v < 0) {
      buf[n++] = 0x2d;
      v = -v;
    }
    const start = n;
    do {
      buf[n++] = 0x30 + (v % 10);
      v = Math.floor(v / 10);
    } while (v > 0);
    // The digits came least significant first.
    for (let i = start, j = n - 1; i < j; i++, j--) {
      const d = buf[i]!;
      buf[i] = buf[j]!;
      buf[j] = d;
    }
    this.n = n;
  }

  /** A string as JSON: printable ASCII without `"` or `\` as it stands, anything else as `JSON.stringify` escapes it. */
  private string(s: string): void {
    const len = s.length;
    this.room(len + 2);
    const buf = this.buf;
    let n = this.n;
    buf[n++] = QUOTE;
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === QUOTE || c === BACKSLASH) return this.raw(JSON.stringify(s));
      buf[n++] = c;
    }
    buf[n++] = QUOTE;
    this.n = n;
  }

  /** Text known to be ASCII (digits, `null`, `true`). */
  private ascii7(t: string): void {
    this.room(t.length);
    for (let i = 0; i < t.length; i++) this.buf[this.n++] = t.charCodeAt(i);
  }

  /** JSON text as it stands, UTF-8 encoded. */
  private raw(t: string): void {
    this.room(t.length * 3);
    const written = this.buf.write(t, this.n, "utf8");
    if (written !== t.length) this.ascii = false;
    this.n += written;
  }

  private room(bytes: number): void {
    if (this.n + bytes <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.n + bytes));
    this.buf.copy(next, 0, 0, this.n);
    this.buf = next;
  }
}
