/**
 * The trading bot of the benchmark and of the invariant and crash tests (loadtest/trade/bot.ts),
 * against a real server: what it queues to keep to the message rate belongs to its connection.
 */
import assert from "node:assert/strict";
import { Bot, SEND_PER_SECOND } from "../../../loadtest/trade/bot.js";
import type { GameServer } from "../../../src/server/server.js";
import { tokenFor } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";
import { pgliteStorage, resetStorage } from "../../helpers/storage.js";

describe("trade bot (loadtest/trade/bot.ts)", function () {
  let server: GameServer;
  let bot: Bot | undefined;
  before(async () => {
    await resetStorage(await pgliteStorage());
    server = await startTestServer({ DISABLE_RATE_LIMIT: "true" });
  });
  after(async () => {
    await bot?.close();
    await server?.close();
  });

  it("close() drops the messages it had queued: none of them goes out on the next connection", async () => {
    bot = await Bot.connect({ url: server.url, token: tokenFor().token, transport: "json" });
    const queued = 5;
    let helps = 0;
    bot.on("chat:message", (d) => {
      if (d.type === "system" && /^Commands:/.test(d.text)) helps++;
    });
    const answered = new Promise<void>((resolve) =>
      bot!.on("chat:message", () => {
        if (helps === SEND_PER_SECOND) resolve();
      }),
    );
    // A full second's worth goes out at once; the rest waits in the bot's queue.
    for (let i = 0; i < SEND_PER_SECOND + queued; i++) bot.send("player:chat", { text: "/help" });
    await answered;
    await bot.close();
    await bot.reconnect();
    // The marker queues behind whatever the bot still holds, so once it is answered, anything that
    // was left from the old connection has been sent and answered too.
    await bot.command("/marker", /^Unknown command \/marker/);
    assert.equal(helps, SEND_PER_SECOND, "no /help queued before close() was sent after it");
  });
});
