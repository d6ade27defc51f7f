/**
 * The viewer inside an exported HTML file: the session the file carries (data blocks, see
 * export/embed.ts), in memory, with every view of the app; no list, no storage, no network.
 */
import { ViewerApp } from "./app/app.js";
import { embeddedSource } from "./export/embedded-source.js";
import { el } from "./render/dom.js";
import "./styles.css";

document.body.dataset.status = "busy";
const embedded = await embeddedSource();
if (!embedded) {
  document.body.append(el("p", { class: "empty" }, "This page holds no session."));
  document.body.dataset.status = "ready";
} else {
  const app = new ViewerApp({ source: embedded.source, showList: false, title: "sessionkit" });
  document.body.append(app.root);
  void app.run(async () => {
    const link = new URLSearchParams(location.hash.replace(/^#/, ""));
    await app.openSession("file", embedded.path, {
      leafId: link.get("leaf"),
      targetId: link.get("target"),
      query: link.get("q") ?? "",
      ...(link.get("filter") ? { filter: link.get("filter") as never } : {}),
    });
  });
}
