/**
 * The closed economy of the chaos run (docs/chaos.md "What it runs"): keeps every bot in some world and
 * busy. Each idle bot, at random, trades with a random idle partner of its world, banks, drops an
 * item and picks it up, or switches to another world. A bot whose connection closed, or whose
 * server stopped answering (an action timed out, then a `/help` heartbeat), joins a random world
 * again, trying the others until one takes it. Nothing is gathered, bought or sold.
 */
import { bank, dropAndPickUp, recoverLeftovers, trade } from "./activities.js";
import type { ChaosBot, Instance } from "./bot.js";
import type { Rng } from "../lib/random.js";
import { sleep } from "../lib/cli.js";

/** The server refuses a trade request of the same pair within 3 s (`RATE_LIMITED`). */
const PAIR_COOLDOWN_MS = 3_100;

export class Economy {
  /** Outcome name → count (`trade:completed`, `bank:deposit:ok`, `join:ok`, …). */
  readonly outcomes = new Map<string, number>();
  private readonly pairReady = new Map<string, number>();
  private readonly tasks = new Set<Promise<void>>();
  private readonly nextThink = new Map<ChaosBot, number>();
  private readonly nextSwitch = new Map<ChaosBot, number>();
  /** Worlds a join was told to stay away from (busy, refused, unanswered), until when. */
  private readonly shunned = new Map<string, number>();
  private stopping = false;
  /** How long a bot goes back for a pile it left (the pile lies longer than the run: docs/chaos.md "Ground"). */
  private readonly leftoverChaseMs: number;

  constructor(
    private readonly bots: ChaosBot[],
    private readonly instances: Instance[],
    private readonly rng: Rng,
    tickMs: number,
  ) {
    this.leftoverChaseMs = Math.max(0, 300 * tickMs - 10_000); // 50 s at TICK_MS=200
    for (const b of bots) this.nextSwitch.set(b, Date.now() + rng.int(5_000, 100_000));
  }

  count(what: string, n = 1): void {
    this.outcomes.set(what, (this.outcomes.get(what) ?? 0) + n);
  }

  /** Run the economy until `untilMs` (Date.now()); `drain` ends it. */
  async run(untilMs: number): Promise<void> {
    while (Date.now() < untilMs) {
      this.step();
      await sleep(20);
    }
    this.stopping = true;
  }

  private spawn(bots: ChaosBot[], work: () => Promise<void>) {
    for (const b of bots) b.busy = true;
    const t = work()
      .catch((e: unknown) => this.count(`error:${(e as Error).message.slice(0, 60)}`))
      .finally(() => {
        for (const b of bots) b.busy = false;
        this.tasks.delete(t);
      });
    this.tasks.add(t);
  }

  private step() {
    const now = Date.now();
    const idle = new Map<string, ChaosBot[]>();
    for (const b of this.rng.shuffle(this.bots)) {
      if (b.busy) continue;
      if (!b.connected) {
        this.spawn([b], () => this.place(b));
        continue;
      }
      if ((this.nextThink.get(b) ?? 0) > now) continue;
      this.nextThink.set(b, now + this.rng.int(30, 120));
      const k = b.instance!.name;
      idle.set(k, [...(idle.get(k) ?? []), b]);
    }
    for (const group of idle.values()) {
      for (const a of group) {
        if (!a.busy) this.decide(a, group, now);
      }
    }
  }

  /** What idle bot `a` does next; `group` are the idle bots of its world. */
  private decide(a: ChaosBot, group: ChaosBot[], now: number) {
    // Piles left behind come first, while they still lie on the ground: go back for them.
    a.leftovers.splice(0, a.leftovers.length, ...a.leftovers.filter((l) => now - l.at < this.leftoverChaseMs || l.instance === a.instance?.name));
    const chase = a.leftovers.find((l) => now - l.at < this.leftoverChaseMs);
    if (chase && chase.instance !== a.instance!.name) {
      const target = this.instances.find((i) => i.name === chase.instance)!;
      return this.spawn([a], async () => {
        this.count("leftover:chase");
        a.leave();
        await this.place(a, undefined, target);
      });
    }
    if (chase && [...a.ground.values()].some((g) => g.itemId === chase.itemId)) {
      return this.spawn([a], async () => this.count("leftover:recovered", await recoverLeftovers(a)));
    }
    if (now >= (this.nextSwitch.get(a) ?? now)) {
      this.nextSwitch.set(a, now + this.rng.int(20_000, 100_000));
      const from = a.instance;
      return this.spawn([a], async () => {
        this.count("switch");
        a.leave();
        await this.place(a, from);
      });
    }
    const r = this.rng.next();
    if (r < 0.06) return this.spawn([a], async () => this.after(a, `bank:${await bank(a, this.rng)}`));
    if (r < 0.12) return this.spawn([a], async () => this.after(a, `drop:${await dropAndPickUp(a, this.rng)}`));
    const b = group.find((x) => x !== a && !x.busy && (this.pairReady.get(pairKey(a, x)) ?? 0) <= now);
    if (!b) return;
    this.pairReady.set(pairKey(a, b), Number.POSITIVE_INFINITY);
    // The one holding more items gives; the other pays.
    const [giver, payer] = a.inventory.length >= b.inventory.length ? [a, b] : [b, a];
    this.spawn([a, b], async () => {
      const out = await trade(giver, payer, this.rng);
      this.pairReady.set(pairKey(a, b), Date.now() + PAIR_COOLDOWN_MS);
      this.count(`trade:${out}`);
      if (out === "timeout") await Promise.all([this.checkAlive(a), this.checkAlive(b)]);
    });
  }

  private async after(bot: ChaosBot, outcome: string) {
    this.count(outcome);
    if (outcome.endsWith("timeout")) await this.checkAlive(bot);
  }

  /** After a timeout: a bot whose server does not answer its heartbeat leaves that connection (and joins elsewhere next). */
  private async checkAlive(bot: ChaosBot) {
    if (!bot.connected || (await bot.heartbeat())) return;
    this.count("abandoned");
    bot.leave();
  }

  /** Join `target`, else a random world (not `avoid`), trying others until one takes the bot, then walk to the post. */
  private async place(bot: ChaosBot, avoid?: Instance, target?: Instance): Promise<void> {
    for (let attempt = 0; !this.stopping || attempt === 0; attempt++) {
      const now = Date.now();
      const open = this.instances.filter((i) => i !== avoid && (this.shunned.get(i.name) ?? 0) <= now);
      const inst = (attempt === 0 ? target : undefined) ?? this.rng.pick(open.length > 0 ? open : this.instances.filter((i) => i !== avoid))!;
      try {
        await bot.join(inst);
        this.count("join:ok");
        if (!(await bot.toPost())) {
          this.count("join:post-timeout");
          await this.checkAlive(bot);
          return;
        }
        if (bot.leftovers.length > 0) this.count("leftover:recovered", await recoverLeftovers(bot));
        return;
      } catch (e) {
        const why = (e as Error).message;
        this.count(`join:${why}`);
        // As a client told to retry later (SERVER_BUSY's Retry-After) or finding no server: that world is left alone for a while.
        if (/SERVER_BUSY|ECONNREFUSED|no answer/.test(why)) this.shunned.set(inst.name, Date.now() + 5_000);
        avoid = inst;
        await sleep(this.rng.int(200, 1_000));
      }
    }
  }

  /** Stop starting activities; wait for the running ones; give bots with leftovers one try to fetch them; everyone leaves. */
  async drain(): Promise<void> {
    this.stopping = true;
    const deadline = Date.now() + 30_000;
    while (this.tasks.size > 0 && Date.now() < deadline) await sleep(50);
    await Promise.all(
      this.bots
        .filter((b) => b.leftovers.length > 0)
        .map(async (b) => {
          for (const name of new Set(b.leftovers.map((l) => l.instance))) {
            const inst = this.instances.find((i) => i.name === name)!;
            if (b.instance !== inst) await b.join(inst).catch(() => undefined);
            if (b.connected) {
              await b.toPost(5_000);
              await b.wait("world:update", () => false, 1_000);
              this.count("leftover:recovered", await recoverLeftovers(b));
            }
          }
        }),
    );
    for (const b of this.bots) b.leave();
  }
}

const pairKey = (a: ChaosBot, b: ChaosBot) => (a.id < b.id ? `${a.id}|${b.id}` : `${b.id}|${a.id}`);
