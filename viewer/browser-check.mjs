// Drives the viewer page in headless Chromium (playwright-core, the browser at $CHROMIUM or
// /usr/bin/chromium, WebGL 2 through SwiftShader) and prints what it saw as JSON; the
// assertions are tests/tiles.rs's. Usage:
//   node browser-check.mjs URL SCREENSHOT.png POINTS.json
// POINTS.json: {"points": [[x, z], ...], "click": [x, z] or null} in world metres.
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";

const [url, shot, pointsFile] = process.argv.slice(2);
// Never hang a test run: give up after 9 minutes.
setTimeout(() => { console.error("browser-check: timed out"); process.exit(2); }, 540000).unref();
const { points, click } = JSON.parse(readFileSync(pointsFile, "utf8"));
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: [
    "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
    "--ignore-gpu-blocklist",
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-dev-shm-usage",
    "--no-first-run",
  ],
});
const out = { consoleErrors: [], failedRequests: [], requests: 0 };
try {
  const page = await browser.newPage({ viewport: { width: 800, height: 500 } });
  page.on("console", (m) => { if (m.type() === "error") out.consoleErrors.push(m.text()); });
  page.on("pageerror", (e) => out.consoleErrors.push(String(e)));
  page.on("request", () => { out.requests += 1; });
  // A request the page cancelled (MapLibre aborts the tiles a camera jump made needless) is
  // no failure; any other is.
  page.on("requestfailed", (r) => {
    const why = r.failure() && r.failure().errorText;
    if (why !== "net::ERR_ABORTED") out.failedRequests.push(`${r.url()}: ${why}`);
  });
  page.on("response", (r) => { if (r.status() >= 400) out.failedRequests.push(`${r.url()}: HTTP ${r.status()}`); });
  await page.goto(url, { waitUntil: "load" });
  await page.evaluate(() => Promise.race([window.viewer.ready, new Promise((_, no) => setTimeout(() => no(new Error("viewer.ready did not resolve in 180 s")), 180000))]));
  // In the page: move the camera, then wait until every tile is in and the map has drawn
  // (polled: an "idle" event may have passed already). At most 120 s a move.
  await page.evaluate(() => {
    window.__settle = async (camera) => {
      const m = window.viewer.map;
      m.jumpTo(camera);
      m.triggerRepaint();
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, 100));
      while (!(m.loaded() && m.areTilesLoaded() && !m.isMoving())) {
        if (performance.now() - t0 > 120000) throw new Error("the map did not settle in 120 s");
        await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    };
  });
  Object.assign(out, await page.evaluate(() => {
    const m = window.viewer.map;
    return { terrain: !!m.getTerrain(), maxZoom: m.getMaxZoom() };
  }));
  // Terrain elevation at max zoom (the view two zooms and more above the tiles' max zoom).
  out.elevations = await page.evaluate(async ({ points }) => {
    const v = window.viewer, m = v.map, zoom = v.meta.layers.height.maxzoom + 3;
    const res = [];
    for (const [x, z] of points) {
      const ll = v.toLngLat([x, z]);
      await window.__settle({ center: ll, zoom, pitch: 0, bearing: 0 });
      res.push({ x, z, maplibre: m.queryTerrainElevation(ll) });
    }
    return res;
  }, { points });
  if (click) {
  // A click on the map: the popup's text.
  const xy = await page.evaluate(async ([x, z]) => {
    const v = window.viewer, m = v.map;
    await window.__settle({ center: v.toLngLat([x, z]), zoom: v.meta.layers.height.maxzoom, pitch: 0, bearing: 0 });
    const p = m.project(v.toLngLat([x, z]));
    return [p.x, p.y];
  }, click);
  await page.mouse.click(xy[0], xy[1]);
  await page.waitForSelector(".maplibregl-popup-content", { timeout: 20000 });
  out.popup = await page.innerText(".maplibregl-popup-content");
  // The picture for the docs: tilted, the whole region in view, the popup kept.
  await page.evaluate(async () => {
    const v = window.viewer, m = v.map, h = v.meta.layers.height;
    await window.__settle({ center: [h.center[0], h.center[1]], zoom: h.maxzoom - 1.3, pitch: 55, bearing: -20 });
  });
  await page.screenshot({ path: shot });
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
