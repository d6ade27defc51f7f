/** The example's page: a SessionManager on the main process's files, through the bridge. */
import { electronStorage } from "sessionkit/adapters/electron/renderer";
import { SessionManager } from "sessionkit";

const storage = electronStorage();
const output = document.querySelector("#output")!;
const sm = await SessionManager.continueRecent(storage, "/example/electron");
sm.appendMessage({ role: "user", content: `opened at ${new Date().toLocaleTimeString()}`, timestamp: Date.now() });
sm.appendMessage({
  role: "assistant",
  content: [{ type: "text", text: "Every message of this window is stored by the main process." }],
  provider: "example",
  model: "none",
  timestamp: Date.now(),
} as never);
await sm.flush();
const { messages } = sm.buildSessionContext();
output.textContent = `${sm.getSessionFile()}\n${messages.length} messages in context`;
